import pg from 'pg';
import type { Queryable } from '../db';
import type { Logger } from '../logger';
import { DELTA_CHANNEL, type TurnMessage } from './channel';

/** The API's side of the stream channel: one LISTEN connection per process, messages handed to their subscriber. */

/**
 * Wakes whoever subscribed to `key` on any API process's hub: a notification on the stream channel that carries
 * nothing but the key. How one replica tells the one holding a request that it was cancelled (lib/builder/service.ts).
 */
export async function notifyHolder(db: Queryable, key: string): Promise<void> {
  await db.query(`SELECT pg_notify('${DELTA_CHANNEL}', $1)`, [JSON.stringify({ t: key })]);
}

export interface DeltaHub {
  /** The messages of one turn (by its run id), or the wake-up of `notifyHolder` for another key. */
  subscribe(turnId: string, onMessage: (msg: TurnMessage) => void): () => void;
  /** Resolves once LISTEN is active, so a subscriber cannot miss the first fragment. */
  ready(): Promise<void>;
  /**
   * Resolves once every notification committed before the call has been handed to its subscriber: a round trip on
   * the listening connection, whose answer Postgres sends after the notifications pending for it. Rejects when the
   * listener is down. (A notification sent while the connection was being replaced is lost: it never arrives.)
   */
  sync(): Promise<void>;
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
          // A flush carries the fragments of several turns (an array); an answer notice is one message.
          const parsed = JSON.parse(n.payload) as TurnMessage | TurnMessage[];
          for (const msg of Array.isArray(parsed) ? parsed : [parsed]) subscribers.get(msg.t)?.(msg);
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

  const ready = async () => {
    if (closed) throw new Error('stream hub closed');
    if (!client) await connect();
  };

  return {
    subscribe(turnId, onMessage) {
      subscribers.set(turnId, onMessage);
      return () => subscribers.delete(turnId);
    },
    ready,
    async sync() {
      await ready();
      await client!.query('SELECT 1');
    },
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}
