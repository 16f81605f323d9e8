import type { BootstrapResult } from '../../lib/accounts/service';
import { http, ownerSession, rawRequest } from './helpers';
import { stackInfo } from './stack-info';

/** A 1×1 PNG (a real image: its header states the size). */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A call of the widget surface as the widget makes it: the public key in the query, the visitor token in a header. */
export function widgetCall(
  bot: BootstrapResult,
  path: string,
  init: { method?: string; body?: unknown; rawBody?: Buffer; token?: string; headers?: Record<string, string> } = {},
) {
  const sep = path.includes('?') ? '&' : '?';
  return http(`${path}${sep}key=${encodeURIComponent(bot.keys.public_key)}`, {
    method: init.method,
    body: init.body,
    rawBody: init.rawBody,
    headers: { ...(init.token ? { 'X-Visitor-Token': init.token } : {}), ...(init.headers ?? {}) },
  });
}

/** A new visitor session of the bot's widget. */
export async function widgetSession(bot: BootstrapResult): Promise<{ session_id: string; visitor_token: string }> {
  const res = await widgetCall(bot, '/v1/widget/session', { method: 'POST' });
  if (res.status !== 201) throw new Error(`session failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Sets the bot's allowed widget origins through the dashboard, as its owner would. */
export async function allowOrigins(bot: BootstrapResult, origins: string[]): Promise<void> {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
    method: 'PATCH',
    body: { allowed_origins: origins },
    headers: await ownerSession(bot),
  });
  if (res.status !== 200) throw new Error(`allowed origins not set: ${res.status} ${res.text}`);
}

/** A request with the headers a browser sets itself (`Origin`), which fetch() does not send. */
export function browserRequest(
  path: string,
  init: { method?: string; origin?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  return rawRequest(`${stackInfo().apiUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.origin ? { Origin: init.origin } : {}),
      ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(init.headers ?? {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}
