import { FAILURES, type FailureInfo, type FailureType } from '../workflows/failures';

/**
 * One error class for everything the API answers with an error body `{error, code}`. The codes are the contract's
 * closed set (Errors section); `error` is human text that may change, clients branch on `code`.
 */
export const ERROR_CODES = {
  bad_request: 400,
  invalid_token: 400,
  missing_key: 401,
  invalid_key: 401,
  invalid_signature: 401,
  unauthorized: 401,
  invalid_credentials: 401,
  wrong_key_type: 403,
  forbidden: 403,
  origin_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  version_conflict: 409,
  idempotency_key_reused: 409,
  email_taken: 409,
  already_member: 409,
  idempotency_in_progress: 409,
  trigger_disabled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  run_failed: 502,
  llm_unavailable: 503,
  llm_overloaded: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

// The failure types' API codes are declared with the types (workflows/failures.ts): a code that is not one of
// ours fails to compile here.
type MustBeErrorCode<T extends ErrorCode> = T;
export type FailureApiCode = MustBeErrorCode<(typeof FAILURES)[FailureType]['api']>;

/**
 * Seconds a client should wait after 503 `service_unavailable` that names no wait of its own: a dependency (Postgres,
 * Temporal) out of reach. Its return cannot be known; a restart or a blip is back within seconds, and every request
 * retried meanwhile is refused in milliseconds, so a short wait costs little (docs/decisions/003-dependency-unreachable-503.md).
 */
export const SERVICE_RETRY_AFTER_SECONDS = 2;

export class ApiError extends Error {
  readonly status: number;
  /** Response headers, e.g. `Retry-After`, which every 503 `service_unavailable` has. */
  readonly headers: Record<string, string>;
  /** A chat turn's failure to answer in time while the turn goes on: a retry of the same request joins it. */
  turnPending = false;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra body fields allowed by the contract, e.g. `session_id`, `retry_after`, `run_id`. */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers, e.g. `Retry-After`. */
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code];
    this.headers =
      code === 'service_unavailable' && !headers['Retry-After']
        ? { ...headers, 'Retry-After': String(SERVICE_RETRY_AFTER_SECONDS) }
        : headers;
  }

  toBody(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra };
  }
}

export const errors = {
  badRequest: (message: string) => new ApiError('bad_request', message),
  notFound: (message = 'Not found') => new ApiError('not_found', message),
  unauthorized: (message = 'Sign in first (POST /v1/auth/login)') => new ApiError('unauthorized', message),
  conflict: (message: string) => new ApiError('conflict', message),
  payloadTooLarge: (limit: number) =>
    new ApiError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`),
  serviceUnavailable: (message = 'Service temporarily unavailable, retry shortly') =>
    new ApiError('service_unavailable', message),
  internal: () => new ApiError('internal_error', 'Internal error; it is safe to retry'),
};

/** Seconds a client should wait before retrying an overloaded backend when the failure names none. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

const FAILURE_TEXT: Partial<Record<ErrorCode, string>> = {
  llm_overloaded: 'The AI backend is busy or the turn did not finish; retry shortly',
  llm_unavailable: 'The AI backend is unavailable (key or funds); the owner must act',
  internal_error: 'The answer could not be generated; it is safe to retry',
};

/**
 * The API's answer to a failed step (contract, Conversation: 503 `{error, code, session_id}`, plus `retry_after` and
 * `Retry-After` when overloaded). The mapping of each failure type is declared once, in workflows/failures.ts.
 */
export function apiErrorForFailure(failure: FailureInfo, extra: Record<string, unknown> = {}): ApiError {
  const code: ErrorCode = FAILURES[failure.type]?.api ?? 'internal_error';
  if (code === 'llm_overloaded') {
    const retryAfter = failure.retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS;
    return new ApiError(
      code,
      FAILURE_TEXT[code]!,
      { ...extra, retry_after: retryAfter },
      { 'Retry-After': String(retryAfter) },
    );
  }
  return new ApiError(code, FAILURE_TEXT[code] ?? failure.message, extra);
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08006',
  '53300', // too_many_connections
]);

/**
 * True when an error means "storage (or another dependency) cannot be reached right now", as opposed to a bug.
 * Those become 503 `service_unavailable`, which the contract tells clients to retry.
 */
export function isUnavailableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && CONNECTION_ERROR_CODES.has(e.code)) return true;
  // A Unix socket that is not there (Postgres stopped removes it): ENOENT of a connect, not of any file.
  if (e.code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'connect') return true;
  // gRPC (Temporal): 14 UNAVAILABLE, 4 DEADLINE_EXCEEDED.
  if (typeof e.code === 'number' && (e.code === 14 || e.code === 4)) return true;
  if (
    typeof e.message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(e.message)
  ) {
    return true;
  }
  if (e.cause) return isUnavailableError(e.cause);
  if (err instanceof AggregateError) return err.errors.some(isUnavailableError);
  return false;
}
