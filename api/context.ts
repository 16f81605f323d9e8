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

/** A file sent in a multipart request: its name and declared type as the client gave them, and its bytes. */
export interface UploadedFile {
  name: string;
  declaredType: string;
  bytes: Buffer;
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
  /** A multipart request's file (api/middleware/multipart.ts); its other fields are the body. */
  upload?: UploadedFile;
  /**
   * What the idempotency step compares instead of the raw body, when the raw body is not the request's identity: a
   * multipart body's boundary is random, so a retry of the same upload would otherwise differ from its first try.
   */
  bodyDigest?: Buffer;
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
