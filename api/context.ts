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
  /** Set by the idempotency step when the request has an `Idempotency-Key`: stable across the request's retries. */
  idempotencyScope?: string;
  /** A handler sets it false when what it answers must not be replayed (a stream that carried an error frame). */
  replayable?: boolean;
  /** The request failed while its turn may still be running (the API stopped waiting): a retry joins that turn. */
  turnPending?: boolean;
  /** The conversation a request concerned, recorded with its stored response (erased with the visitor). */
  sessionId?: string;
  /** Parsed and validated input, left by the validate step of each route. */
  input: { body?: unknown; query?: unknown; params?: unknown };
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
