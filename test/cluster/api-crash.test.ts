import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type Balancer, startBalancer } from '../../stack/balancer';
import { startApi, waitForApi } from '../../stack/platform';
import { type ManagedProcess, freePort } from '../../stack/processes';
import { newBot, sseFrames, testDb, transcriptOf } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
// test/http/api-crash.test.ts, unchanged: its own API (outside the balancer) killed during a JSON chat.
import '../http/api-crash.test';

/**
 * An API replica killed mid-stream, in the production shape (temporal-config/README.md, "What a failover looks like to
 * a visitor"). What the client may see, and what this file asserts:
 *
 * - the stream it was reading ends without the end frame (`done: true`): the balancer closes the client's connection
 *   when the replica's goes, within a few seconds — it does not hang; what it had received is the start of the answer;
 * - a retry with the same `Idempotency-Key` through the balancer reaches a surviving replica. Until the dead replica's
 *   hold on the key lapses (its lease: 15 s at most after its last renewal, renewed every 5 s) the retry answers
 *   `409 idempotency_in_progress` with a `Retry-After` that is true: 1 s while the owner might still be alive, then
 *   the seconds left until the key can be taken over, and a retry after that wait is not refused again;
 * - the retry that takes the key over joins the turn the dead replica started (it ran on, on a worker): a whole
 *   stream with its end frame, whose text equals the stored answer; the turn ran once, and further retries replay it.
 *
 * The shared cluster's replicas serve the other files running beside this one, so this file kills one of its own: a
 * balancer (Caddy with deploy/Caddyfile, as the cluster runs it: stack/balancer.ts) over two API replicas on the cluster's Postgres, Temporal and task queue (the
 * cluster's workers run the turn).
 */
const ROUTE = '/v1/api/chat/stream';

/** Requests of the streaming route a replica has answered 200 or 409 (its `/metrics`; a stream counts once opened). */
async function streamRequests(replica: string): Promise<{ ok: number; inProgress: number }> {
  const text = await (await fetch(`${replica}/metrics`)).text();
  const count = (status: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('http_requests_total{') && l.includes(`route="${ROUTE}"`))
      .filter((l) => l.includes(`status="${status}"`))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  return { ok: count('200'), inProgress: count('409') };
}

describe('an API replica killed mid-stream, behind the balancer', () => {
  const replicas: { url: string; process: ManagedProcess }[] = [];
  let balancer: Balancer;

  beforeAll(async () => {
    const started = await Promise.all(
      [1, 2].map(async (n) => {
        const port = await freePort();
        const proc = startApi({ ...stackInfo().env, PORT: String(port) }, { quiet: true, name: `api-crash-${n}` });
        const url = `http://127.0.0.1:${port}`;
        await waitForApi(url, proc);
        return { url, process: proc };
      }),
    );
    replicas.push(...started);
    balancer = await startBalancer({
      port: await freePort(),
      backends: replicas.map((r) => r.url),
      dataDir: path.join(stackInfo().dataDir, 'api-crash-balancer'),
      name: 'api-crash-balancer',
      quiet: true,
    });
  }, 120_000);

  afterAll(async () => {
    await balancer?.close();
    await Promise.all(replicas.map((r) => r.process.stop()));
  });

  it('the stream ends without its end frame; a retry with the key gets the whole stored answer', async () => {
    const bot = await newBot();
    const session = randomUUID();
    // A model that streams for about 2.5 s (the cluster's turn budget is 4 s): the replica dies in the middle.
    const body = { session_id: session, message: '[[fake:pace-300-2500-6]] tell me about failover' };
    const headers = { 'Idempotency-Key': randomUUID() };

    const res = await fetch(`${balancer.url}${ROUTE}`, {
      method: 'POST',
      headers: { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const frames: Record<string, unknown>[] = [];
    let buffer = '';
    /** Reads until `until` holds or the stream ends; 'ended' when it ended cleanly, 'cut' when the connection broke. */
    const read = async (until: () => boolean): Promise<'more' | 'ended' | 'cut'> => {
      while (!until()) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch {
          return 'cut';
        }
        if (chunk.done) return 'ended';
        buffer += decoder.decode(chunk.value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          frames.push(JSON.parse(buffer.slice('data: '.length, cut)) as Record<string, unknown>);
          buffer = buffer.slice(cut + 2);
        }
      }
      return 'more';
    };
    expect(await read(() => frames.some((f) => 'delta' in f))).toBe('more');

    // The replica holding the stream is the one whose /metrics counts it; the other one survives.
    const counts = await Promise.all(replicas.map((r) => streamRequests(r.url)));
    const holder = counts.findIndex((c) => c.ok === 1);
    expect(counts.map((c) => c.ok).sort()).toEqual([0, 1]);
    const survivor = replicas[1 - holder];
    await replicas[holder].process.stop('SIGKILL');
    const killedAt = Date.now();
    // When the dead replica's hold on the key lapses: the earliest a retry can take it over.
    const lease = await testDb().query<{ left: number }>(
      `SELECT EXTRACT(EPOCH FROM lease_until - now())::float8 AS left FROM idempotency_keys WHERE idempotency_key = $1`,
      [headers['Idempotency-Key']],
    );
    const leaseLeft = lease.rows[0].left * 1000;
    expect(leaseLeft).toBeGreaterThan(0);
    expect(leaseLeft).toBeLessThanOrEqual(15_000);

    let hangTimer: NodeJS.Timeout | undefined;
    const ending = await Promise.race([
      read(() => false),
      new Promise<'hung'>((r) => (hangTimer = setTimeout(() => r('hung'), 10_000))),
    ]).finally(() => clearTimeout(hangTimer));
    expect(ending).not.toBe('hung');
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    expect(frames.filter((f) => f.done)).toEqual([]);
    const partial = frames.map((f) => f.delta ?? '').join('');
    expect(partial.length).toBeGreaterThan(0);

    // The client retries with the same key, following Retry-After, as README "Operate it" tells it to.
    const waits: number[] = [];
    let answered: Awaited<ReturnType<typeof sseFrames>> | undefined;
    while (!answered && Date.now() - killedAt < 40_000) {
      const retry = await sseFrames(ROUTE, { key: bot.keys.secret_key, body, headers, baseUrl: balancer.url });
      if (retry.status !== 409) {
        answered = retry;
        break;
      }
      expect(JSON.parse(retry.raw).code).toBe('idempotency_in_progress');
      // A wait longer than a second is the time until the key can be taken over: after it, no 409 again.
      expect(waits.at(-1) ?? 1).toBe(1);
      const wait = Number(retry.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(15);
      waits.push(wait);
      await new Promise((r) => setTimeout(r, wait * 1000));
    }
    expect(answered?.status).toBe(200);
    // The waits the 409s named were true: the answer came soon after the lease lapsed (a request, and the joined
    // turn's answer sent whole after a second's wait for fragments), not after waits that overshot it.
    const answeredAfter = Date.now() - killedAt;
    expect(answeredAfter).toBeGreaterThanOrEqual(leaseLeft - 100);
    expect(answeredAfter).toBeLessThan(leaseLeft + 4_000);
    expect(Math.max(...waits)).toBeGreaterThan(1);
    const { frames: whole } = answered!;
    expect(whole.at(-1)).toEqual({ done: true, session_id: session, handoff: false, quota_exceeded: false });
    const text = whole.map((f) => f.delta ?? '').join('');
    expect(text).toContain('Fake answer:');
    expect(text.startsWith(partial)).toBe(true);
    const stored = await transcriptOf(session);
    expect(stored.map((m) => m.author)).toEqual(['visitor', 'bot']);
    expect(stored[1].text).toBe(text);
    const runs = await testDb().query(`SELECT status FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows).toEqual([{ status: 'done' }]);

    // Every retry reached the surviving replica (the dead one refused the connection; the balancer went on).
    const after = await streamRequests(survivor.url);
    expect(after).toEqual({ ok: 1, inProgress: waits.length });

    // The stored stream is replayed whole to any later retry.
    const replay = await sseFrames(ROUTE, { key: bot.keys.secret_key, body, headers, baseUrl: balancer.url });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.raw).toBe(answered!.raw);
  });
});
