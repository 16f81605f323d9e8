import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DELTA_CHANNEL, type DeltaMessage } from '../../lib/streams/channel';
import { createDeltaPublisher } from '../../lib/streams/publisher';
import { testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * The worker's stream publisher against the stack's Postgres: the turns one worker streams share its flushes — one
 * statement and one notification for all of them — and each stream's text still arrives whole and in order.
 */
describe('the stream publisher', () => {
  const clients: pg.Client[] = [];
  afterAll(async () => Promise.all(clients.map((c) => c.end())));

  async function listen(): Promise<DeltaMessage[][]> {
    const listener = new pg.Client({ connectionString: stackInfo().databaseUrl });
    clients.push(listener);
    await listener.connect();
    const payloads: DeltaMessage[][] = [];
    listener.on('notification', (n) => {
      const parsed = JSON.parse(n.payload ?? 'null') as DeltaMessage | DeltaMessage[];
      if (Array.isArray(parsed)) payloads.push(parsed);
    });
    await listener.query(`LISTEN ${DELTA_CHANNEL}`);
    return payloads;
  }

  it('flushes several turns in one notification; each turn’s text is stored and announced in order', async () => {
    const payloads = await listen();

    const publisher = createDeltaPublisher(testDb(), { coalesceMs: 50, retryForMs: 0 });
    const turns: string[] = [randomUUID(), randomUUID(), randomUUID()];
    const streams = await Promise.all(turns.map((t) => publisher.open(t, 0)));
    const words = ['alpha ', 'beta ', 'gamma ', 'delta ', 'epsilon'];
    for (const word of words) {
      streams.forEach((s, i) => s.push(`${i}:${word}`));
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(streams.map((s) => s.finish()));
    const total = turns.length * words.join('').length + turns.length * words.length * 2;
    const ourFragments = () => payloads.flat().filter((m) => turns.includes(m.t));
    // Notifications reach the listener's connection a moment after the statements that sent them.
    await waitUntil('every fragment announced', async () =>
      ourFragments().reduce((n, m) => n + m.d.length, 0) === total ? true : undefined,
    );

    const ours = payloads.map((p) => p.filter((m) => turns.includes(m.t))).filter((p) => p.length);
    // Far fewer notifications than pieces, and some carried several turns at once.
    expect(ours.length).toBeLessThan(words.length * turns.length);
    expect(ours.some((p) => new Set(p.map((m) => m.t)).size > 1)).toBe(true);
    for (const [i, t] of turns.entries()) {
      const expected = words.map((w) => `${i}:${w}`).join('');
      const fragments = ours.flat().filter((m) => m.t === t);
      let offset = 0;
      for (const f of fragments) {
        expect(f.o).toBe(offset);
        offset += f.d.length;
      }
      expect(fragments.map((f) => f.d).join('')).toBe(expected);
      const row = await testDb().query(`SELECT text, complete FROM turn_streams WHERE turn_id = $1`, [t]);
      expect(row.rows[0]).toEqual({ text: expected, complete: true });
    }
  });

  it('sends a stream’s first piece and its end at once, without the text other streams have waiting', async () => {
    const payloads = await listen();
    // A window far longer than the test: only the pieces that go at once are sent before the ends.
    const publisher = createDeltaPublisher(testDb(), { coalesceMs: 60_000, retryForMs: 0 });
    const [a, b] = [randomUUID(), randomUUID()];
    const streamA = await publisher.open(a, 0);
    streamA.push('A1 ');
    const ours = () => payloads.map((p) => p.filter((m) => m.t === a || m.t === b)).filter((p) => p.length);
    await waitUntil('A’s first piece', async () => (ours().length === 1 ? true : undefined));
    streamA.push('A2 '); // waits for the window
    const streamB = await publisher.open(b, 0);
    streamB.push('B1 ');
    await waitUntil('B’s first piece', async () => (ours().length === 2 ? true : undefined));
    expect(ours()[1]).toEqual([{ t: b, o: 0, d: 'B1 ' }]);
    streamB.push('B2');
    await streamA.finish();
    await waitUntil('A’s end', async () => (ours().length === 3 ? true : undefined));
    expect(ours()[2]).toEqual([{ t: a, o: 3, d: 'A2 ' }]);
    await streamB.finish();
    await waitUntil('B’s end', async () => (ours().length === 4 ? true : undefined));
    expect(ours()[3]).toEqual([{ t: b, o: 3, d: 'B2' }]);
  });

  it('stores its sends as HOT updates (no new index entries): at least half of them, whatever else shares the pages', async () => {
    // A connection of its own, so that its statistics can be flushed when the sends are done.
    const conn = new pg.Client({ connectionString: stackInfo().databaseUrl });
    clients.push(conn);
    await conn.connect();
    const counts = async () =>
      (
        await testDb().query<{ updates: number; hot: number }>(
          `SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
            WHERE relname = 'turn_streams'`,
        )
      ).rows[0];
    const before = await counts();
    const publisher = createDeltaPublisher(conn, { coalesceMs: 1, retryForMs: 0 });
    const stream = await publisher.open(randomUUID(), 0);
    const sends = 20;
    for (let i = 0; i < sends; i++) {
      stream.push(`piece ${i} `);
      await new Promise((r) => setTimeout(r, 5));
    }
    await stream.finish();
    await conn.query('SELECT pg_stat_force_next_flush()');
    // Other test files stream meanwhile: their sends only add to both counts.
    const after = await waitUntil('the sends counted', async () => {
      const now = await counts();
      return now.updates - before.updates >= sends ? now : undefined;
    });
    expect(after.hot - before.hot).toBeGreaterThanOrEqual(sends / 2);
  });

  it('leaves no window timer behind once nothing is pending (a dropped stream, an answer announced whole)', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const publisher = createDeltaPublisher(testDb(), { coalesceMs: 60_000, retryForMs: 0 });
    const turn = randomUUID();
    const stream = await publisher.open(turn, 0);
    stream.push('first '); // goes at once
    await waitUntil('the first piece stored', async () => {
      const row = await testDb().query<{ len: number }>(`SELECT len FROM turn_streams WHERE turn_id = $1`, [turn]);
      return row.rows[0]?.len > 0 ? true : undefined;
    });
    await new Promise((r) => setImmediate(r)); // the flush's end has run
    // Counted within one tick: the rest of the test process (pools, other waits) sets and clears timers of its own.
    const before = timers();
    stream.push('waits for the window');
    expect(timers()).toBe(before + 1);
    stream.drop();
    expect(timers()).toBe(before);
  });
});
