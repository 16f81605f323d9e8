import pg from 'pg';
import type { Queryable } from './db';
import type { Logger } from './logger';

/**
 * Streaming answers from the worker to the API process that holds the visitor's connection (DESIGN.md, A chat
 * turn, step 4): the LLM activity publishes text fragments with `pg_notify`; each API process LISTENs on one
 * connection and hands fragments to the request waiting for that turn. Postgres delivers notifications in commit
 * order, and the publisher sends one at a time, so fragments arrive in order.
 */
export const DELTA_CHANNEL = 'agent_deltas';
const MAX_PAYLOAD_CHARS = 3_000; // pg_notify payloads must stay under 8000 bytes, and text may be 2–4 bytes a char

export interface DeltaMessage {
  /** Turn id the API subscribed to. */
  t: string;
  /** Attempt key: fragments from a retried attempt carry a new one (see the API's stream handler). */
  k: string;
  d: string;
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
  subscribe(turnId: string, onDelta: (msg: DeltaMessage) => void): () => void;
  /** Resolves once LISTEN is active, so a subscriber cannot miss the first fragment. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createDeltaHub(databaseUrl: string, logger: Logger): DeltaHub {
  const subscribers = new Map<string, (msg: DeltaMessage) => void>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000, application_name: 'agent-platform-stream' });
      c.on('notification', (n) => {
        if (!n.payload) return;
        try {
          const msg = JSON.parse(n.payload) as DeltaMessage;
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
    subscribe(turnId, onDelta) {
      subscribers.set(turnId, onDelta);
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
