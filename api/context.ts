import type Koa from 'koa';
import type { Principal } from '../lib/auth';
import type { Logger } from '../lib/logger';
import type { UserSession } from '../lib/sessions';

/** Something that sees every chunk of an event stream as it is produced (the idempotency step records it). */
export interface StreamTap {
  data(chunk: Buffer): void;
  /** The stream's last frame was produced; the response ends when this settles. */
  end(): void | Promise<void>;
}

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
  /** Who sees an event stream's frames as they are produced (see `openEventStream`). */
  streamTaps?: StreamTap[];
  /** Set when the response is an event stream opened by `openEventStream`. */
  streamed?: boolean;
  /** Parsed and validated input, left by the validate step of each route. */
  input: { body?: unknown; query?: unknown; params?: unknown };
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
