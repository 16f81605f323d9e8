import type { AnswerSource } from '../workflows/contracts/agent-run';
import type { TurnResult } from '../workflows/contracts/conversation';
import type { Queryable } from './db';
import { DELTA_CHANNEL, MAX_PAYLOAD_BYTES, type TurnMessage } from './streams/channel';

/**
 * A turn's outcome, announced on the stream channel (lib/streams/) by the statement that records it — the answer
 * stored (lib/runs/bookkeeping.ts), the hand-over or the forward (lib/conversations/transitions.ts), the failure
 * (activities/agent-run.ts) — and delivered at commit: the one way a turn's outcome
 * reaches the request waiting for it (docs/decisions/154-one-way-for-the-answer.md). A plain answer — the common case —
 * is `{t, a, s?, o?}`; every other outcome (a hand-over, a message forwarded to a person, a failure) carries the
 * update's result as it is, `{t, r}`. With `m` the answer did not fit a notification: it is read from the transcript.
 */
export type OutcomeMessage =
  | {
      t: string;
      a: string;
      /** The knowledge sources the answer used, when it used some. */
      s?: AnswerSource[];
      /** The agent could not answer and offers a person. */
      o?: 1;
    }
  | { t: string; r: Omit<TurnResult, 'runId'>; m?: 1 };

/** The outcome a message announces, or null for a fragment (or a holder's wake-up, lib/builder/service.ts). */
export function announcedOutcome(message: TurnMessage): { result: TurnResult; inTranscript: boolean } | null {
  const msg = message as Partial<OutcomeMessage> & { t: string };
  if ('r' in msg && msg.r) return { result: { ...msg.r, runId: msg.t }, inTranscript: msg.m === 1 };
  if ('a' in msg && typeof msg.a === 'string') {
    const result: TurnResult = {
      answer: msg.a,
      runId: msg.t,
      ...(msg.s ? { sources: msg.s } : {}),
      ...(msg.o ? { handoffOffered: true as const } : {}),
    };
    return { result, inTranscript: false };
  }
  return null;
}

/**
 * The notification payload announcing a turn's outcome. An answer too long for one notification is announced
 * without its text (the text is in the transcript by then); null only if even that does not fit.
 */
export function outcomeNotice(turnId: string, outcome: TurnResult): string | null {
  const { runId: _runId, ...result } = outcome;
  const plain = !result.handoff && !result.error && !result.afterHours;
  const whole: OutcomeMessage = plain
    ? {
        t: turnId,
        a: result.answer,
        ...(result.sources?.length ? { s: result.sources } : {}),
        ...(result.handoffOffered ? { o: 1 as const } : {}),
      }
    : { t: turnId, r: result };
  for (const msg of [whole, { t: turnId, r: { ...result, answer: '' }, m: 1 as const }]) {
    const payload = JSON.stringify(msg);
    if (Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES) return payload;
  }
  return null;
}

/** Sends an announcement (`outcomeNotice`) on its own, delivered when the caller's transaction commits. */
export async function announce(db: Queryable, payload: string | null): Promise<void> {
  if (payload !== null) await db.query(`SELECT pg_notify('${DELTA_CHANNEL}', $1)`, [payload]);
}
