import type { AnswerSource } from '../../workflows/contracts/agent-run';
import type { TurnResult } from '../../workflows/contracts/conversation';
import { type ApiError, apiErrorForFailure, errors } from '../errors';
import { answerMessageId } from '../runs/bookkeeping';
import type { DeltaMessage } from '../streams/channel';
import { type AfterHoursView, afterHoursField, asTestChat } from './chat';
import type { ConversationDeps } from './deps';
import { quotaExceededReply } from './sessions';
import {
  type ChatInput,
  type PreparedTurn,
  type TurnFailure,
  prepareChat,
  runTurn,
  subscribeTurn,
  visitorFailure,
} from './turn';

/** Spec, chat/stream frames: a fragment, an error, or the end frame. */
export type StreamFrame =
  | { delta: string; notice?: 'outage' }
  | { error: string; code?: string; retry_after?: number }
  | ({ done: true; session_id: string; handoff: boolean; quota_exceeded: boolean; notice?: 'outage' } & EndFields);

/** What the end frame says of an answer. */
interface EndFields {
  sources?: AnswerSource[];
  handoff_offered?: true;
  after_hours?: AfterHoursView;
}

interface StreamLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ChatStream {
  sessionId: string;
  /**
   * The visitor's message of this turn; absent when nothing is stored (monthly quota used up, or — once `run` has
   * written its error frame — the turn could not be sent at all).
   */
  visitorMessageId?: string;
  /** The id the bot's answer gets if the bot answers (not when handed over, failed or over quota). */
  answerMessageId?: string;
  /**
   * Set before the end frame: an error frame was written while the turn goes on (the API stopped waiting, or
   * Temporal was out of reach after it began) or completed anyway — its answer is or will be in the transcript.
   */
  answerPending?: boolean;
  /**
   * Runs the turn, writing its frames; always ends with the end frame and never throws. `turnPending`: an error frame
   * was written while the turn went on or completed anyway (a retry of the same request joins that turn).
   */
  run(write: (frame: StreamFrame) => void, log: StreamLog): Promise<{ turnPending: boolean }>;
}

/**
 * `/chat/stream`: everything that can fail with an ordinary JSON error (binding, quota, the stream listener) happens
 * here; `run` then writes the frames. It subscribes to the turn's fragments before sending the turn, and always ends
 * with the end frame (contract, chat/stream).
 */
export async function openStream(
  deps: ConversationDeps,
  botId: string,
  input: ChatInput,
  turnScope?: string,
): Promise<ChatStream> {
  const prepared = await prepareChat(deps, botId, input, turnScope);
  if (prepared.kind === 'quota_exceeded') return quotaStream(prepared.sessionId);
  let write: (frame: StreamFrame) => void = () => undefined;
  const assembled = createStreamAssembler();
  const subscription = await subscribeTurn(deps, prepared.update.runId, {
    onFragment: (msg) => {
      const fresh = assembled.add(msg);
      if (fresh) write({ delta: fresh });
    },
  });
  if (!subscription) throw errors.serviceUnavailable('Streaming is temporarily unavailable; retry shortly');

  const stream: ChatStream = {
    sessionId: prepared.sessionId,
    visitorMessageId: prepared.update.messageId,
    answerMessageId: answerMessageId(prepared.update.runId),
    async run(sink, log) {
      write = sink;
      let end: StreamEnd;
      try {
        const outcome = await runTurn(deps, prepared, subscription, { streamed: true });
        end = outcome.ok ? answerEnd(outcome.result, assembled) : failureEnd(outcome.failure, log);
      } catch (err) {
        log.error({ err }, 'stream turn failed');
        end = { frames: [errorFrame(errors.internal())], ...NOTHING_MORE };
      } finally {
        subscription.close();
      }
      writeEnd(stream, prepared, end, sink);
      return { turnPending: end.turnPending };
    },
  };
  return stream;
}

/** The test chat streamed, as `/chat/stream` streams a visitor's turn (the dashboard's test chat). */
export const testChatStream = asTestChat(openStream);

/** How a streamed turn ends: its last frames before the end frame, and what the end frame and the caller are told. */
interface StreamEnd {
  frames: StreamFrame[];
  handoff: boolean;
  extras: EndFields;
  /** An error frame was written while the turn goes on (or it answered anyway): a retry joins it. */
  turnPending: boolean;
  /** The turn never reached a worker: its visitor message is not stored, and the end frame names none. */
  notSent: boolean;
}

const NOTHING_MORE = { handoff: false, extras: {}, turnPending: false, notSent: false };

/**
 * A turn that ended with an answer or a hand-over: what the fragments did not show of it. Every fragment published
 * before the outcome was recorded has arrived by now (runTurn), so the rest is written at once. If the model's first
 * attempt was cut off and a retry produced a different text, the fragments already sent cannot be taken back: an
 * error frame without `code` says so, and the full answer is in the transcript.
 */
function answerEnd(result: TurnResult, assembled: ReturnType<typeof createStreamAssembler>): StreamEnd {
  const shown = assembled.shown;
  if (result.handoff) {
    // Escalation arrives as an ordinary fragment — after what was streamed of it when the agent said it cannot
    // answer and handed over; with an operator already live there is none.
    const rest = result.answer.startsWith(shown) ? result.answer.slice(shown.length) : result.answer;
    return { ...NOTHING_MORE, frames: rest ? [{ delta: rest }] : [], handoff: true, extras: afterHoursField(result) };
  }
  if (assembled.diverged || !result.answer.startsWith(shown)) {
    const error = 'The answer was interrupted and regenerated; the complete answer is in the transcript';
    // The turn did answer: a retry joins it and receives the whole answer.
    return { ...NOTHING_MORE, frames: [{ error }], turnPending: true };
  }
  const rest = result.answer.slice(shown.length);
  return {
    ...NOTHING_MORE,
    frames: rest ? [{ delta: rest }] : [],
    extras: {
      ...(result.sources ? { sources: result.sources } : {}),
      ...(result.handoffOffered ? { handoff_offered: true as const } : {}),
    },
  };
}

/**
 * A failed turn's error frame. Temporal or Postgres out of reach: the JSON endpoint answers 503
 * `service_unavailable`, but a stream has begun and its frames have no such code; `llm_overloaded` is the one that
 * says retry, and when. A turn known never to have reached a worker has no visitor message stored either (the widget
 * gives its text back to be sent again, where a stored one would be sent twice).
 */
function failureEnd(failure: TurnFailure, log: StreamLog): StreamEnd {
  if (failure.kind === 'unreachable') {
    log.warn({ err: failure.cause }, 'stream turn could not be sent: a dependency is unavailable');
  }
  return {
    ...NOTHING_MORE,
    frames: [failureFrame(failure)],
    turnPending: failure.stillRunning,
    notSent: failure.notSent,
  };
}

/** A failed turn's error frame (the failure the visitor is told, `visitorFailure`). */
export function failureFrame(failure: TurnFailure): StreamFrame {
  return errorFrame(apiErrorForFailure(visitorFailure(failure)));
}

/**
 * A failed turn as a stream's error frame. Spec: only `llm_unavailable` and `llm_overloaded` frames carry `code` (and
 * the latter `retry_after`); an internal error frame has none.
 */
function errorFrame(e: ApiError): StreamFrame {
  return e.code === 'llm_unavailable' || e.code === 'llm_overloaded'
    ? {
        error: e.message,
        code: e.code,
        ...(e.extra.retry_after ? { retry_after: e.extra.retry_after as number } : {}),
      }
    : { error: e.message };
}

/** The turn's last frames and the end frame, with what the stream's caller reads off it first. */
function writeEnd(stream: ChatStream, prepared: PreparedTurn, end: StreamEnd, write: (frame: StreamFrame) => void) {
  if (end.notSent) stream.visitorMessageId = undefined;
  for (const frame of end.frames) write(frame);
  stream.answerPending = end.turnPending;
  write({
    done: true,
    session_id: prepared.sessionId,
    handoff: end.handoff,
    quota_exceeded: false,
    ...end.extras,
  });
}

/** The monthly quota is used up: the placeholder as the one fragment, and the end frame that says so. */
function quotaStream(sessionId: string): ChatStream {
  return {
    sessionId,
    async run(write) {
      const { answer, notice } = quotaExceededReply(sessionId);
      write({ delta: answer, notice });
      write({ done: true, session_id: sessionId, handoff: false, quota_exceeded: true, notice });
      return { turnPending: false };
    },
  };
}

/**
 * Puts a turn's fragments together in the order of their offsets, as the API hands them to the visitor: a fragment
 * arriving twice, or overlapping what was shown, adds only what is new; one arriving ahead of a missing one waits for
 * it. Text that contradicts what was shown (the stream was lost with a Postgres crash and a retry started afresh) is
 * not shown: the stream is then `diverged`, and the end of the turn says so.
 */
export function createStreamAssembler() {
  let shown = '';
  let diverged = false;
  const ahead = new Map<number, string>();
  const take = (o: number, d: string): string => {
    const overlap = Math.min(d.length, shown.length - o);
    if (shown.slice(o, o + overlap) !== d.slice(0, overlap)) {
      diverged = true;
      return '';
    }
    const fresh = d.slice(overlap);
    shown += fresh;
    return fresh;
  };
  return {
    /** The text to show for this fragment now (possibly with fragments that waited for it), or ''. */
    add(msg: Pick<DeltaMessage, 'o' | 'd'>): string {
      if (diverged) return '';
      if (msg.o > shown.length) {
        ahead.set(msg.o, msg.d);
        return '';
      }
      let out = take(msg.o, msg.d);
      for (let next = ahead.get(shown.length); next !== undefined && !diverged; next = ahead.get(shown.length)) {
        ahead.delete(shown.length);
        out += take(shown.length, next);
      }
      return out;
    },
    get shown() {
      return shown;
    },
    get diverged() {
      return diverged;
    },
  };
}
