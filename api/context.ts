import type Koa from 'koa';
import type { Principal } from '../lib/auth';
import type { Logger } from '../lib/logger';
import type { UserSession } from '../lib/sessions';

/** What middleware leaves on `ctx.state` for the handlers after it. */
export interface AppState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** The signed-in dashboard user, on `/v1/dashboard/*`. */
  session?: UserSession;
  /** The raw request body, exactly as received (signatures are computed over it). */
  rawBody?: Buffer;
  /** Parsed and validated input, left by the validate step of each route. */
  input: { body?: unknown; query?: unknown; params?: unknown };
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
