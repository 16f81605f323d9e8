import { createParser } from 'eventsource-parser';
import { type AnswerSource, readSources } from './sources';

/**
 * The frames of a chat stream (contract, chat/stream): the widget's (docs/widget.md) and the dashboard's test chat. Each
 * is one `data: <json>` line ended by an empty line, told apart by which field is present — `error` (an error frame,
 * HTTP status stays 200),
 * `done` (the end frame, always last), else `delta` (a fragment of the answer).
 */
export type StreamFrame =
  | { type: 'delta'; delta: string; outage: boolean }
  | { type: 'error'; message: string; code?: string; retryAfter?: number }
  | {
      type: 'end';
      sessionId?: string;
      handoff: boolean;
      quotaExceeded: boolean;
      outage: boolean;
      messageId?: string;
      visitorMessageId?: string;
      /** After an error frame: the turn goes on, and its answer comes through the poll (the widget's stream only). */
      answerPending: boolean;
      /** The knowledge sources the answer used (web/shared/sources.ts); absent when it used none. */
      sources?: AnswerSource[];
      /** The agent could not answer and offers a person: a client offers a button that asks for one. */
      handoffOffered: boolean;
      /** Handed over outside the team's hours: when they are back (Unix ms; null when unknown). */
      afterHours?: { backAt: number | null };
    };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `after_hours: {back_at}` as the end frame and the handoff response carry it; undefined when absent or not that. */
export function readAfterHours(v: unknown): { backAt: number | null } | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const backAt = (v as { back_at?: unknown }).back_at;
  return { backAt: typeof backAt === 'number' && Number.isFinite(backAt) ? backAt : null };
}

const afterHoursOf = (v: unknown): { afterHours?: { backAt: number | null } } => {
  const afterHours = readAfterHours(v);
  return afterHours ? { afterHours } : {};
};

const sourcesOf = (v: unknown): { sources?: AnswerSource[] } => {
  const sources = readSources(v);
  return sources ? { sources } : {};
};

/** One frame's JSON as the widget reads it; null for anything that is not a frame (ignored, not fatal). */
function toFrame(json: unknown): StreamFrame | null {
  if (!json || typeof json !== 'object') return null;
  const f = json as Record<string, unknown>;
  // Errors are detected by the presence of `error` (contract): the internal error frame has no `code`.
  if ('error' in f) {
    const retryAfter = typeof f.retry_after === 'number' && f.retry_after > 0 ? f.retry_after : undefined;
    return {
      type: 'error',
      message: str(f.error) ?? 'The answer could not be produced.',
      code: str(f.code),
      retryAfter,
    };
  }
  if (f.done === true) {
    return {
      type: 'end',
      sessionId: str(f.session_id),
      // Flags are checked as `=== true` (contract, ChatResponse).
      handoff: f.handoff === true,
      quotaExceeded: f.quota_exceeded === true,
      outage: f.notice === 'outage',
      messageId: str(f.message_id),
      visitorMessageId: str(f.visitor_message_id),
      answerPending: f.answer_pending === true,
      ...sourcesOf(f.sources),
      handoffOffered: f.handoff_offered === true,
      ...afterHoursOf(f.after_hours),
    };
  }
  if (typeof f.delta === 'string') return { type: 'delta', delta: f.delta, outage: f.notice === 'outage' };
  return null;
}

/** One event's data as a frame; null for a broken or unknown one (skipped: the end frame, or the body's end, still
 * finishes the turn). */
function frameOf(data: string): StreamFrame | null {
  try {
    return toFrame(JSON.parse(data));
  } catch {
    return null;
  }
}

/**
 * Reads a response body's frames to its end, handing each to `onFrame` as soon as it is complete. The event stream is
 * parsed by `eventsource-parser` (line ends, comments, `event:` and `id:` lines, several `data:` lines of one event
 * joined with a newline, as the EventSource standard says); a character split between two network reads is kept for
 * the next. `ended`: the end frame came; `broken`: the connection failed before the body's end (what was read is
 * handed on first).
 */
export async function readFrames(
  body: ReadableStream<Uint8Array>,
  onFrame: (frame: StreamFrame) => void,
): Promise<{ ended: boolean; broken: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  const parser = createParser({
    onEvent: ({ data }) => {
      const frame = frameOf(data);
      if (!frame) return;
      if (frame.type === 'end') ended = true;
      onFrame(frame);
    },
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      if (done) return { ended, broken: false };
    }
  } catch {
    return { ended, broken: true };
  }
}
