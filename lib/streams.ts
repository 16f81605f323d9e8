import pg from 'pg';
import type { Queryable } from './db';
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
  /** Attempt key: fragments from a retried attempt carry a new one (see the API's stream handler). */
  k: string;
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

export interface DeltaPublisher {
  publish(turnId: string, attemptKey: string, delta: string): Promise<void>;
  /** Resolves when everything published so far for the turn has been sent. */
  flush(turnId: string): Promise<void>;
}

/** Coalesces fragments that arrive while a notify is in flight into the next one: fewer round trips under load. */
export function createDeltaPublisher(db: Queryable): DeltaPublisher {
  const pending = new Map<string, { key: string; text: string; sending: Promise<void> | null }>();
  const pump = async (turnId: string): Promise<void> => {
    const entry = pending.get(turnId);
    if (!entry) return;
    while (entry.text) {
      const text = entry.text.slice(0, MAX_PAYLOAD_CHARS);
      entry.text = entry.text.slice(text.length);
      const msg: DeltaMessage = { t: turnId, k: entry.key, d: text };
      await db.query('SELECT pg_notify($1, $2)', [DELTA_CHANNEL, JSON.stringify(msg)]);
    }
    entry.sending = null;
    pending.delete(turnId);
  };
  return {
    publish(turnId, attemptKey, delta) {
      const entry = pending.get(turnId) ?? { key: attemptKey, text: '', sending: null };
      entry.text += delta;
      entry.key = attemptKey;
      pending.set(turnId, entry);
      entry.sending ??= pump(turnId);
      return Promise.resolve();
    },
    async flush(turnId) {
      await pending.get(turnId)?.sending;
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
