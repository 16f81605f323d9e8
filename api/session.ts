import { errors } from '../lib/errors';
import type { UserSession } from '../lib/sessions';
import type { AppContext } from './context';
import type { AppDeps } from './deps';

/** The bot a key belongs to (secret and public keys are always a bot's). */
export function keyBot(ctx: AppContext): { botId: string; workspaceId: string } {
  const principal = ctx.state.principal;
  if (!principal?.botId) throw errors.notFound('This key belongs to no bot');
  return { botId: principal.botId, workspaceId: principal.workspaceId };
}

/** The signed-in user of a dashboard route (set by the session middleware). */
export function sessionUser(ctx: AppContext): UserSession {
  const session = ctx.state.session;
  if (!session) throw errors.unauthorized();
  return session;
}

/** The bot named in a dashboard path, if it is in the signed-in user's workspace; 404 otherwise (never 403: no leaks). */
export function sessionBot(
  deps: AppDeps,
  ctx: AppContext,
  botId: string,
): Promise<{ id: string; workspace_id: string }> {
  return deps.services.bots.findInWorkspace(sessionUser(ctx).workspaceId, botId);
}

/** Where the API is reached from outside: PUBLIC_BASE_URL, else the request's own origin (trigger addresses). */
export function publicBaseUrl(deps: AppDeps, ctx: AppContext): string {
  return deps.config.PUBLIC_BASE_URL ?? `${ctx.protocol}://${ctx.host}`;
}

/** Where links in e-mails point: the dashboard's address (DASHBOARD_URL, else the API's own). */
export function dashboardLinkBase(deps: AppDeps, ctx: AppContext): string {
  return (deps.config.DASHBOARD_URL ?? publicBaseUrl(deps, ctx)).replace(/\/+$/, '');
}
