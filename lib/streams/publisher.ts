import { randomUUID } from 'node:crypto';
import { type Queryable, preparedStatement } from '../db';
import { retrying } from '../retry';
import {
  DELTA_CHANNEL,
  MAX_ITEM_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_CHARS,
  type StreamClaim,
  StreamTakenOver,
  claimStreamSql,
} from './channel';

/** The worker's side of the stream channel: each turn's fragments, flushed together across turns. */

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
  /**
   * Stops without sending what is queued: the caller's own statement ends the turn instead (the announced answer
   * carries the whole text, and the API shows what the fragments did not; activities/agent-run.ts).
   */
  drop(): void;
}

export interface DeltaPublisher {
  /**
   * Claims the turn's stream for this attempt of step `step` (a turn with tool calls has one step per model call).
   * An attempt of the same step that was cut off (its worker died, its database write failed) left its text: it is
   * returned as `prefix`, and this attempt continues after it.
   */
  open(turnId: string, step: number): Promise<TurnStream>;
  /** The stream of a claim made in another statement (`claimStreamSql`, inside a chat turn's startRun). */
  adopt(claim: StreamClaim): TurnStream;
}

export interface PublisherOptions {
  /**
   * The publisher flushes at most once per this many milliseconds: everything every stream of the process received
   * meanwhile goes in one statement and one notification (docs/decisions/015-stream-fragment-coalescing.md). A model
   * streams a token every few milliseconds to each of hundreds of turns; one statement per token would be the
   * platform's largest cost. A stream's first piece and its end go at once.
   */
  coalesceMs: number;
  /** How long sends keep retrying through a database outage before the attempt gives up. */
  retryForMs: number;
}

const CLAIM = claimStreamSql('$1::text', '$2::uuid', '$3::int');

// Every stream with text waiting goes out in one statement per flush: each stream's text is appended where its
// owner left it, and one notification carries every fragment that was stored (as a JSON array). The text is kept in
// the statement that notifies it, so what any listener has seen is always what a retry reads. It changes no indexed
// column, so each send is a HOT update (migrations/1763803400000_turn_streams_hot_sends.sql).
const SEND_BATCH = preparedStatement(
  'turn-stream-send-batch',
  `WITH b AS (
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::int[], $5::bool[], $6::int[])
       AS b(turn_id, owner, d, n, complete, expected)),
   u AS (
     UPDATE turn_streams t SET text = t.text || b.d, len = t.len + b.n, complete = b.complete
       FROM b WHERE t.turn_id = b.turn_id AND t.owner = b.owner AND t.len = b.expected
     RETURNING t.turn_id),
   n AS (
     SELECT pg_notify('${DELTA_CHANNEL}', json_agg(json_build_object('t', b.turn_id, 'o', b.expected, 'd', b.d))::text)
       FROM b JOIN u USING (turn_id) WHERE b.n > 0 HAVING count(*) > 0)
   SELECT u.turn_id, (SELECT count(*) FROM n) AS notified FROM u`,
);

/** Cuts `text` at most `max` units in, never between the two halves of a surrogate pair. */
function cutAt(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/** What one open stream has waiting, and who waits for it to be stored. */
interface OpenStream {
  turnId: string;
  owner: string;
  offset: number;
  queued: string;
  /** finish() asked for the step to be marked complete once everything queued is stored. */
  completing: boolean;
  sentAny: boolean;
  taken: boolean;
  failed: unknown;
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/** What one stream sends in a flush: as much of its queue as one notification holds. */
interface FlushItem {
  s: OpenStream;
  d: string;
  complete: boolean;
  expected: number;
}

/** What each stream sends now, in statements whose notification stays under Postgres's 8000 bytes. */
function flushBatches(streams: OpenStream[]): FlushItem[][] {
  const items = streams.map((s) => {
    let n = cutAt(s.queued, MAX_PAYLOAD_CHARS);
    while (n > 0 && Buffer.byteLength(JSON.stringify(s.queued.slice(0, n))) > MAX_ITEM_BYTES)
      n = cutAt(s.queued, n >> 1);
    const d = s.queued.slice(0, n);
    return { s, d, complete: s.completing && n === s.queued.length, expected: s.offset };
  });
  const batches: FlushItem[][] = [];
  let size = Infinity;
  for (const item of items) {
    const bytes = Buffer.byteLength(JSON.stringify(item.d)) + item.s.turnId.length + 48;
    if (size + bytes > MAX_PAYLOAD_BYTES) {
      batches.push([]);
      size = 2;
    }
    batches.at(-1)!.push(item);
    size += bytes;
  }
  return batches;
}

/** Sends one batch in one statement; each of its streams is then settled (stored, taken over, or failed). */
async function sendBatch(
  db: Queryable,
  retryForMs: number,
  batch: FlushItem[],
  settle: (s: OpenStream) => void,
): Promise<void> {
  let stored: Set<string>;
  try {
    const res = await retrying(retryForMs, () =>
      db.query<{ turn_id: string }>(
        SEND_BATCH([
          batch.map((i) => i.s.turnId),
          batch.map((i) => i.s.owner),
          batch.map((i) => i.d),
          batch.map((i) => i.d.length),
          batch.map((i) => i.complete),
          batch.map((i) => i.expected),
        ]),
      ),
    );
    stored = new Set(res.rows.map((r) => r.turn_id));
  } catch (err) {
    for (const { s } of batch) {
      s.failed = err;
      settle(s);
    }
    return;
  }
  for (const { s, d, complete, expected } of batch) {
    if (!stored.has(s.turnId)) {
      // Either another attempt owns the stream, or this text was stored before its answer was lost (the
      // connection broke after the commit) and the statement retried: the row tells which.
      const now = await retrying(retryForMs, () =>
        db.query<{ owner: string; len: number }>(`SELECT owner, len FROM turn_streams WHERE turn_id = $1`, [s.turnId]),
      ).catch((err: unknown) => ((s.failed = err), null));
      const row = now?.rows[0];
      if (!s.failed && (row?.owner !== s.owner || row.len !== expected + d.length)) s.taken = true;
    }
    if (!s.taken && !s.failed) {
      s.offset = expected + d.length;
      s.queued = s.queued.slice(d.length);
      s.sentAny = true;
      if (complete) s.completing = false;
    }
    settle(s);
  }
}

/**
 * One publisher per worker process: the streams of every turn in flight share its flushes (docs/decisions/015-stream-fragment-coalescing.md).
 * A flush is one statement, at most one in flight. Every coalescing window one flush
 * carries what all streams have waiting; between windows a stream whose first piece or end is waiting goes at once,
 * alone (with any other such stream) — it does not take every other stream's few characters with it, which would
 * make each turn's pieces as many as the turns starting and ending around it.
 */
export function createDeltaPublisher(db: Queryable, opts: PublisherOptions): DeltaPublisher {
  const pending = new Set<OpenStream>();
  /** The pending streams whose first piece or end is waiting: they go without waiting for the window. */
  const urgent = new Set<OpenStream>();
  let inFlight: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  /** When the last flush of every stream (the window's) ended. */
  let lastWindowAt = 0;

  const kick = () => {
    if (inFlight || !pending.size) return;
    const wait = urgent.size ? 0 : lastWindowAt + opts.coalesceMs - Date.now();
    if (wait <= 0) {
      if (timer) clearTimeout(timer);
      timer = null;
      run();
    } else {
      timer ??= setTimeout(() => {
        timer = null;
        run();
      }, wait);
    }
  };

  const run = () => {
    const windowDue = Date.now() >= lastWindowAt + opts.coalesceMs;
    const streams = [...(windowDue ? pending : urgent)];
    urgent.clear();
    inFlight = flush(streams)
      .catch(() => undefined) // each stream's waiters got the failure
      .finally(() => {
        inFlight = null;
        if (windowDue) lastWindowAt = Date.now();
        kick();
      });
  };

  /** With nothing pending, no window timer is left behind (it would hold a process that has nothing else to do). */
  const leave = (s: OpenStream) => {
    pending.delete(s);
    urgent.delete(s);
    if (!pending.size && timer) {
      clearTimeout(timer);
      timer = null;
    }
  };

  /** A stream whose text is all stored (and completed if asked) leaves the pending set; its waiters resume. */
  const settle = (s: OpenStream) => {
    if (s.taken || s.failed) {
      leave(s);
      const err = s.failed ?? new StreamTakenOver(s.turnId);
      for (const w of s.waiters.splice(0)) w.reject(err);
      return;
    }
    if (!s.queued && !s.completing) {
      leave(s);
      for (const w of s.waiters.splice(0)) w.resolve();
    } else if (s.completing) {
      urgent.add(s); // its end did not fit in one notification: the rest goes at once too
    }
  };

  const flush = async (streams: OpenStream[]) => {
    for (const batch of flushBatches(streams)) await sendBatch(db, opts.retryForMs, batch, settle);
  };

  /** Resolves once everything queued on `s` so far is stored (and its completion, if asked). */
  const stored = (s: OpenStream, now: boolean): Promise<void> => {
    if (s.taken) return Promise.reject(new StreamTakenOver(s.turnId));
    if (s.failed) return Promise.reject(s.failed);
    if (!s.queued && !s.completing) return Promise.resolve();
    pending.add(s);
    if (now) urgent.add(s);
    const done = new Promise<void>((resolve, reject) => s.waiters.push({ resolve, reject }));
    kick();
    return done;
  };

  const adopt = ({ turnId, owner, row }: StreamClaim): TurnStream => {
    const s: OpenStream = {
      turnId,
      owner,
      offset: row.len,
      queued: '',
      completing: false,
      sentAny: false,
      taken: false,
      failed: undefined,
      waiters: [],
    };
    return {
      prefix: row.text.slice(row.step_start),
      complete: row.complete,
      push(delta) {
        if (s.taken || s.failed || !delta) return;
        // The first piece of a stream goes at once (the visitor is waiting for it); the rest waits for the window.
        if (!s.sentAny && !s.queued) urgent.add(s);
        s.queued += delta;
        pending.add(s);
        kick();
      },
      async finish() {
        s.completing = true;
        await stored(s, true);
      },
      async close() {
        await stored(s, true).catch(() => undefined);
      },
      drop() {
        s.queued = '';
        urgent.delete(s);
        // A flush in flight settles it; otherwise it leaves now.
        if (!s.waiters.length) leave(s);
      },
    };
  };

  return {
    async open(turnId, step) {
      const owner = randomUUID();
      const claimed = await retrying(opts.retryForMs, () => db.query<StreamClaim['row']>(CLAIM, [turnId, owner, step]));
      return adopt({ turnId, owner, row: claimed.rows[0] });
    },
    adopt,
  };
}
