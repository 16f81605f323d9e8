import { ApplicationFailure, type TemporalFailure, TimeoutFailure } from '@temporalio/workflow';

/**
 * Every `ApplicationFailure` type the platform raises, declared once (STYLE.md 6: a closed set of string constants).
 * For each: whether retrying can help, and the API error code it becomes when it reaches a client. Activities throw
 * with `failure()`, retry policies list `NON_RETRYABLE`, and the API maps with `apiErrorForFailure` (lib/errors.ts):
 * nothing else spells a type out, so a typo is a compile error instead of a silent change of retry behaviour.
 *
 * This module is imported by workflow code, so it imports nothing but the workflow SDK.
 */
export const FAILURES = {
  /** The AI backend refused the key, has no funds, or does not know the model: the owner must act. */
  llm_unavailable: { retryable: false, api: 'llm_unavailable' },
  /** The AI backend is busy, rate limiting, failing or slow: the client may retry soon. */
  llm_overloaded: { retryable: false, api: 'llm_overloaded' },
  /** The workspace has no credits left; for a visitor's client that is a funds problem like the backend's own. */
  no_credits: { retryable: false, api: 'llm_unavailable' },
  /** A poll trigger could not fetch its address: a failed run that counts towards pausing the trigger. */
  poll_failed: { retryable: false, api: 'internal_error' },
  /** The bot was deleted while something of it ran (a scheduled refresh may outlive it). */
  bot_not_found: { retryable: false, api: 'not_found' },
  /** Input a crawler refuses: a bug in the caller, retrying cannot help. */
  scan_invalid: { retryable: false, api: 'internal_error' },
  /** A site scan gave up (its workflow's own failure). */
  scan_failed: { retryable: false, api: 'internal_error' },
  /** An owner's check of an agent gave up (its workflow's own failure; docs/decisions/155-owner-check.md). */
  check_failed: { retryable: false, api: 'internal_error' },
  /** A webhook receiver answered 4xx or a redirect: final (contract, Delivery rules 2). */
  webhook_rejected: { retryable: false, api: 'internal_error' },
  /** A webhook address the SSRF policy refuses: final (contract, Delivery rules 5). */
  webhook_blocked: { retryable: false, api: 'internal_error' },
  /** A webhook receiver answered 5xx or could not be reached: retried 1, 5, 25 s (contract, Delivery rules 1). */
  webhook_failed: { retryable: true, api: 'internal_error' },
  /** `POST /v1/api/handoff` on a bot whose handoff is off: the contract's 404. */
  handoff_disabled: { retryable: false, api: 'not_found' },
  /** Anything unclassified (storage kept failing, a bug): safe for the client to retry. */
  internal_error: { retryable: false, api: 'internal_error' },
} as const satisfies Record<string, { retryable: boolean; api: string }>;

export type FailureType = keyof typeof FAILURES;

/** For retry policies' `nonRetryableErrorTypes`: every type retrying cannot help. */
export const NON_RETRYABLE: FailureType[] = (Object.keys(FAILURES) as FailureType[]).filter(
  (t) => !FAILURES[t].retryable,
);

function isFailureType(type: string | undefined | null): type is FailureType {
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(FAILURES, type);
}

/** An ApplicationFailure of a declared type, retryable or not as declared. */
export function failure(type: FailureType, message: string, details?: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !FAILURES[type].retryable, details });
}

/** What a failed step tells its caller: its declared type (unknown types read as `internal_error`), message, retry hint. */
export interface FailureInfo {
  type: FailureType;
  message: string;
  /** Seconds after which a retry makes sense (`llm_overloaded`). */
  retryAfter?: number;
}

/**
 * The first ApplicationFailure in a failure's cause chain. Activity, local-activity and child-workflow failures
 * wrap the original differently; walking the chain reads them all the same way (STYLE.md: match by `type`).
 */
function applicationFailureIn(err: unknown): ApplicationFailure | undefined {
  for (let e: unknown = err; e; e = (e as TemporalFailure).cause) {
    if (e instanceof ApplicationFailure) return e;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as TemporalFailure).cause) {
    if (e instanceof TimeoutFailure) return true;
  }
  return false;
}

/**
 * A failure read as a declared type: the ApplicationFailure's own type and message (an undeclared type reads as
 * `internal_error`); with no ApplicationFailure in the chain, `timeout` for a timeout when given (a run that used up
 * its turn budget), else `internal_error` with `fallbackMessage`.
 */
export function failureInfo(err: unknown, opts: { timeout?: FailureInfo; fallbackMessage?: string } = {}): FailureInfo {
  const cause = applicationFailureIn(err);
  if (!cause && opts.timeout && isTimeout(err)) return opts.timeout;
  const type: FailureType = isFailureType(cause?.type) ? cause.type : 'internal_error';
  const details = (cause?.details?.[0] ?? {}) as { retryAfter?: number };
  const message = cause?.message || opts.fallbackMessage || (err instanceof Error ? err.message : String(err));
  return { type, message, ...(typeof details.retryAfter === 'number' ? { retryAfter: details.retryAfter } : {}) };
}
