import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type Queryable, preparedStatement } from './db';
import { isUnavailableError } from './errors';
import type { Logger } from './logger';

/**
 * Answers travel from the worker to the API process that holds the visitor's connection (DESIGN.md, A chat turn,
 * step 4): the LLM activity publishes text fragments with `pg_notify`, and the statement that stores a message
 * run's answer also notifies it (delivered at commit, so the answer is durable before anyone reads it). Each API
 * process LISTENs on one connection and hands messages to the request waiting for that turn. Postgres delivers
 * notifications in commit order, and the publisher sends one at a time, so fragments arrive in order and before
 * the answer.
 */
export const DELTA_CHANNEL = 'agent_deltas';
const MAX_PAYLOAD_CHARS = 3_000; // pg_notify payloads must stay under 8000 bytes, and text may be 2–4 bytes a char
const MAX_PAYLOAD_BYTES = 7_900;

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

/** A turn's whole answer, sent when it was committed to the transcript. */
export interface AnswerMessage {
  t: string;
  a: string;
}

export type TurnMessage = DeltaMessage | AnswerMessage;

export function isAnswer(msg: TurnMessage): msg is AnswerMessage {
  return typeof (msg as AnswerMessage).a === 'string';
}

/**
 * The notification payload announcing a committed answer, or null when the answer is too long for one (the API
 * then takes it from the workflow update, a few milliseconds later).
 */
export function answerNotice(turnId: string, answer: string): string | null {
  const payload = JSON.stringify({ t: turnId, a: answer } satisfies AnswerMessage);
  return Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES ? payload : null;
}

/** Another attempt of the same turn claimed its stream: this one must not publish or store anything more. */
export class StreamTakenOver extends Error {
  constructor(turnId: string) {
    super(`stream of turn ${turnId} was taken over by another attempt`);
    this.name = 'StreamTakenOver';
  }
}

/** One attempt's right to stream one step (model call) of a turn. */
export interface TurnStream {
  /** What an earlier attempt of this step already streamed: the visitor has seen it, so this attempt continues it. */
  readonly prefix: string;
  /** The earlier attempt streamed the step's whole text: it is the answer, no model call needed. */
  readonly complete: boolean;
  /** Queues text after everything published so far; it is sent with what else arrives within the window. */
  push(delta: string): void;
  /** Sends what is queued and marks the step complete; `StreamTakenOver` if another attempt owns the stream. */
  finish(): Promise<void>;
  /** Sends what is queued (what the visitor saw stays what a retry continues) and stops. */
  close(): Promise<void>;
}

export interface DeltaPublisher {
  /**
   * Claims the turn's stream for this attempt of step `step` (a turn with tool calls has one step per model call).
   * An attempt of the same step that was cut off (its worker died, its database write failed) left its text: it is
   * returned as `prefix`, and this attempt continues after it.
   */
  open(turnId: string, step: number): Promise<TurnStream>;
}

export interface PublisherOptions {
  /**
   * Pieces arriving within this many milliseconds of the previous notification go out together in the next one: a
   * model streams a token every few milliseconds, and each notification is a statement (docs/decisions.md,
   * "Streams that stay true"). The first piece goes at once.
   */
  coalesceMs: number;
  /** How long sends keep retrying through a database outage before the attempt gives up. */
  retryForMs: number;
}

const CLAIM = `INSERT INTO turn_streams (turn_id, owner, step) VALUES ($1, $2, $3)
  ON CONFLICT (turn_id) DO UPDATE SET owner = EXCLUDED.owner, updated_at = now(),
    step_start = CASE WHEN turn_streams.step = EXCLUDED.step THEN turn_streams.step_start ELSE turn_streams.len END,
    complete = turn_streams.complete AND turn_streams.step = EXCLUDED.step,
    step = EXCLUDED.step
  RETURNING text, len, step_start, complete`;

// The text is kept in the statement that notifies it, so what any listener has seen is always what a retry reads.
const SEND = preparedStatement(
  'turn-stream-send',
  `WITH s AS (
     UPDATE turn_streams SET text = text || $3, len = len + $4, complete = $5, updated_at = now()
      WHERE turn_id = $1 AND owner = $2 AND len = $7 RETURNING 1)
   SELECT CASE WHEN $4 > 0 THEN pg_notify('${DELTA_CHANNEL}', $6) END FROM s`,
);

/** Cuts `text` at most `max` units in, never between the two halves of a surrogate pair. */
function cutAt(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

export function createDeltaPublisher(db: Queryable, opts: PublisherOptions): DeltaPublisher {
  return {
    async open(turnId, step) {
      const owner = randomUUID();
      const claimed = await retrying(opts.retryForMs, () =>
        db.query<{ text: string; len: number; step_start: number; complete: boolean }>(CLAIM, [turnId, owner, step]),
      );
      const row = claimed.rows[0];
      let offset = row.len;
      let queued = '';
      let lastSentAt = 0;
      let taken = false;
      let closing = false;
      let sending: Promise<void> | null = null;
      let wake: (() => void) | null = null;

      const send = async (text: string, complete: boolean) => {
        const payload = JSON.stringify({ t: turnId, o: offset, d: text } satisfies DeltaMessage);
        const res = await retrying(opts.retryForMs, () =>
          db.query(SEND([turnId, owner, text, text.length, complete, payload, offset])),
        );
        if (!res.rowCount) {
          // Either another attempt owns the stream, or this send was applied before its answer was lost (the
          // connection broke after the commit) and retried: the row tells which.
          const now = await retrying(opts.retryForMs, () =>
            db.query<{ owner: string; len: number }>(`SELECT owner, len FROM turn_streams WHERE turn_id = $1`, [
              turnId,
            ]),
          );
          const row = now.rows[0];
          if (row?.owner !== owner || row.len !== offset + text.length) {
            taken = true;
            throw new StreamTakenOver(turnId);
          }
        }
        offset += text.length;
        lastSentAt = Date.now();
      };

      const pump = async () => {
        while (queued && !taken) {
          const wait = lastSentAt + opts.coalesceMs - Date.now();
          if (wait > 0 && !closing) await new Promise<void>((r) => ((wake = r), setTimeout(r, wait)));
          wake = null;
          const n = cutAt(queued, MAX_PAYLOAD_CHARS);
          const text = queued.slice(0, n);
          queued = queued.slice(n);
          await send(text, false);
        }
      };
      const drain = async () => {
        closing = true;
        wake?.();
        while (sending) {
          const current = sending;
          await current;
          if (sending === current) sending = null;
        }
        if (queued && !taken) await pump();
      };

      return {
        prefix: row.text.slice(row.step_start),
        complete: row.complete,
        push(delta) {
          if (taken || !delta) return;
          queued += delta;
          // A failed send keeps the text queued; finish() or close() reports it.
          sending ??= pump().finally(() => (sending = null));
          sending.catch(() => undefined);
        },
        async finish() {
          await drain();
          if (taken) throw new StreamTakenOver(turnId);
          await send('', true);
        },
        async close() {
          await drain().catch(() => undefined);
        },
      };
    },
  };
}

/** Runs `fn` again after a connection failure (Postgres restarting) until it succeeds or `forMs` has passed. */
export async function retrying<T>(forMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailableError(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
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

export interface DeltaHub {
  subscribe(turnId: string, onMessage: (msg: TurnMessage) => void): () => void;
  /** Resolves once LISTEN is active, so a subscriber cannot miss the first fragment. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createDeltaHub(databaseUrl: string, logger: Logger): DeltaHub {
  const subscribers = new Map<string, (msg: TurnMessage) => void>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const c = new pg.Client({
        connectionString: databaseUrl,
        connectionTimeoutMillis: 3_000,
        application_name: 'agent-platform-stream',
      });
      c.on('notification', (n) => {
        if (!n.payload) return;
        try {
          const msg = JSON.parse(n.payload) as TurnMessage;
          subscribers.get(msg.t)?.(msg);
        } catch {
          // not ours
        }
      });
      c.on('error', (err) => {
        logger.warn({ err }, 'stream listener lost its connection; reconnecting');
        client = null;
        connecting = null;
        c.end().catch(() => undefined);
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${DELTA_CHANNEL}`);
        client = c;
      } catch (err) {
        connecting = null;
        await c.end().catch(() => undefined);
        throw err;
      }
    })();
    return connecting;
  };

  return {
    subscribe(turnId, onMessage) {
      subscribers.set(turnId, onMessage);
      return () => subscribers.delete(turnId);
    },
    async ready() {
      if (closed) throw new Error('stream hub closed');
      if (!client) await connect();
    },
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}
