import { dashboardAddress, publicAddress } from '../lib/config';
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

/** Where the API is reached from outside (trigger addresses, media URLs): configured, never the request's Host. */
export function publicBaseUrl(deps: AppDeps): string {
  return publicAddress(deps.config);
}

/** Where links in e-mails point: the dashboard's configured address (never the request's Host). */
export function dashboardLinkBase(deps: AppDeps): string {
  return dashboardAddress(deps.config);
}
