/**
 * The stream channel's wire format, shared by the worker's publisher (./publisher.ts) and the API's listener
 * (./listener.ts). Answers travel from the worker to the API process that holds the visitor's connection (docs/architecture.md, A chat turn,
 * step 4): the LLM activity publishes text fragments with `pg_notify`, and the statement that records a turn's
 * outcome (the answer stored, the hand-over, the failure) also notifies it (delivered at commit, so the outcome is
 * durable before anyone reads it). Each API process LISTENs on one connection and hands messages to the request
 * waiting for that turn. Postgres delivers notifications in commit order, and the publisher sends one at a time, so
 * fragments arrive in order and before the outcome.
 */
export const DELTA_CHANNEL = 'agent_deltas';
export const MAX_PAYLOAD_CHARS = 3_000; // pg_notify payloads must stay under 8000 bytes, and text may be 2–4 bytes a char
export const MAX_PAYLOAD_BYTES = 7_900;
/** One stream's fragment in a flush, JSON-encoded: a batch of several stays under MAX_PAYLOAD_BYTES. */
export const MAX_ITEM_BYTES = 7_000;

/** A text fragment of a turn's answer. */
export interface DeltaMessage {
  /** Turn id the API subscribed to (the run id). */
  t: string;
  /**
   * Where `d` starts in the turn's streamed text (UTF-16 units). A retried attempt continues at the offset the
   * earlier one reached, so a listener appends what is new and never shows a piece twice.
   */
  o: number;
  d: string;
}

/**
 * A message of the channel for one turn (`t`): a fragment, or the announcement of the turn's outcome
 * (lib/announcements.ts).
 */
export type TurnMessage = DeltaMessage | { t: string };

/** Another attempt of the same turn claimed its stream: this one must not publish or store anything more. */
export class StreamTakenOver extends Error {
  constructor(turnId: string) {
    super(`stream of turn ${turnId} was taken over by another attempt`);
    this.name = 'StreamTakenOver';
  }
}

/** A claim of a turn's stream by one attempt, and what the row held when it was claimed. */
export interface StreamClaim {
  turnId: string;
  owner: string;
  /** The turn_streams row as the claim returned it. */
  row: { text: string; len: number; step_start: number; complete: boolean };
}

/**
 * The statement that claims a turn's stream for one attempt of one step, with its parameters' placeholders, typed
 * (so it can be a part of a larger statement; a null turn id claims nothing): it returns the row's text, len,
 * step_start and complete.
 */
export function claimStreamSql(turnId: string, owner: string, step: string): string {
  return `INSERT INTO turn_streams (turn_id, owner, step) SELECT ${turnId}, ${owner}, ${step} WHERE ${turnId} IS NOT NULL
  ON CONFLICT (turn_id) DO UPDATE SET owner = EXCLUDED.owner, claimed_at = now(),
    step_start = CASE WHEN turn_streams.step = EXCLUDED.step THEN turn_streams.step_start ELSE turn_streams.len END,
    complete = turn_streams.complete AND turn_streams.step = EXCLUDED.step,
    step = EXCLUDED.step
  RETURNING text, len, step_start, complete`;
}
