import { z } from 'zod';
import { ApiError } from './errors';
import { unstorableReason } from './text';

/**
 * Opaque cursors (contract, Pagination: never parsed or constructed by clients). Encoded, versioned JSON, checked against
 * the shape each list expects: a cursor that does not decode, or decodes into anything else (wrong types, negative
 * positions, text Postgres cannot compare), is 400 `bad_request` — never a silent restart, never a 500.
 */
export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...value })).toString('base64url');
}

export function decodeCursor<S extends z.ZodType<Record<string, string | number>>>(
  cursor: string,
  shape: S,
): z.output<S> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const version = (parsed as { v?: unknown } | null)?.v;
  const checked = version === 1 ? shape.safeParse(parsed) : undefined;
  if (!checked?.success) throw new ApiError('bad_request', 'cursor: not a cursor returned by this API');
  return checked.data;
}

/** A position in an ordered column (a sequence or an identity). */
const position = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A key string: bounded, and nothing Postgres refuses in text (NUL, unpaired surrogates). */
const key = z
  .string()
  .max(256)
  .refine((s) => unstorableReason(s) === null);

/** Postgres' text form of a timestamptz (`2026-11-23 09:22:01.123456+00`), the only form a runs cursor holds. */
const TIMESTAMPTZ = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?[+-](\d{2})(:\d{2})?$/;

/** A real instant in that form (no 31 February, no hour 25): Postgres would refuse the cast with a 500 otherwise. */
function isTimestamptz(text: string): boolean {
  const m = TIMESTAMPTZ.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, sec));
  return (
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    h < 24 &&
    mi < 60 &&
    sec < 60
  );
}

/** The cursor shapes of the API's lists, one place for each. */
export const CURSORS = {
  /** Transcripts, polls and knowledge sources: the last row's sequence number. */
  seq: z.object({ seq: position }),
  /**
   * Knowledge sources: the last row's sequence number and, newest first only, `o: 'newest'`. Oldest first writes no
   * `o`, so its cursors are those the public list has always returned; a cursor is refused in the other order.
   */
  sources: z.object({ seq: position, o: z.literal('newest').optional() }),
  /** Operator threads: the last thread's hand-over time (Unix ms) and session. */
  threads: z.object({ e: position, s: key }),
  /** The run log: the last run's start (Postgres timestamptz text) and id. */
  runs: z.object({ t: z.string().refine(isTimestamptz), i: key }),
};
