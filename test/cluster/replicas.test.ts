import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * What holds only with several API replicas (test/cluster/global-setup.ts: two behind the balancer, TRUST_PROXY on):
 * one rate budget per client whichever replica answers, streams that reach the visitor piece by piece through the
 * balancer whichever worker runs the turn, and the balancer's own answer when a replica is gone.
 */
const replicas = () => (stackInfo() as ReturnType<typeof stackInfo> & { replicas: string[] }).replicas;

/**
 * Runs `counts` until its requests fall in one rate window: fixed one-minute windows (contract, Limits) restart the count,
 * and on a busy machine a few requests may straddle the minute. Each request reports its `RateLimit-Reset`; a reset
 * that grows from one request to the next is a new window.
 */
async function inOneWindow<T>(counts: () => Promise<{ result: T; resets: number[] }>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const { result, resets } = await counts();
    if (resets.every((r, i) => i === 0 || r <= resets[i - 1]) || attempt === 2) return result;
  }
}

describe('API replicas behind the balancer', () => {
  it('count one rate budget per key and client, whichever replica answers', async () => {
    const [a, b] = replicas();
    const remaining = await inOneWindow(async () => {
      const bot = await newBot();
      const client = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
      const counted: number[] = [];
      const resets: number[] = [];
      for (let i = 0; i < 6; i++) {
        // As the balancer would send them: the client in X-Forwarded-For, alternately to each replica.
        const res = await http('/v1/api/messages?session_id=x', {
          key: bot.keys.secret_key,
          baseUrl: i % 2 ? b : a,
          headers: { 'X-Forwarded-For': client },
        });
        expect(res.status).toBe(200);
        counted.push(Number(res.headers.get('ratelimit-remaining')));
        resets.push(Number(res.headers.get('ratelimit-reset')));
      }
      return { result: counted, resets };
    });
    expect(remaining).toEqual(remaining.map((_, i) => remaining[0] - i));
  });

  it('sees each visitor as the address the balancer saw, not as the balancer nor as what the client wrote', async () => {
    const budgets = await inOneWindow(async () => {
      const bot = await newBot();
      const resets: number[] = [];
      const from = (localAddress: string, headers: Record<string, string> = {}) =>
        new Promise<number>((resolve, reject) => {
          const req = request(
            `${stackInfo().apiUrl}/v1/api/messages?session_id=x`,
            { localAddress, headers: { 'X-Bot-Key': bot.keys.secret_key, ...headers } },
            (res) => {
              res.resume();
              resets.push(Number(res.headers['ratelimit-reset']));
              resolve(Number(res.headers['ratelimit-remaining']));
            },
          );
          req.on('error', reject);
          req.end();
        });
      const first = await from('127.0.0.1');
      const sameWithHeader = await from('127.0.0.1', { 'X-Forwarded-For': '203.0.113.77' });
      const other = await from('127.0.0.2');
      return { result: { first, sameWithHeader, other }, resets };
    });
    // The same visitor writing an X-Forwarded-For of its own is still the same visitor.
    expect(budgets.sameWithHeader).toBe(budgets.first - 1);
    // Another address in front of the balancer is another visitor, with a budget of its own.
    expect(budgets.other).toBe(budgets.first);
  });

  it('streams a turn through the balancer piece by piece; the text equals the stored answer', async () => {
    const bot = await newBot();
    const session = randomUUID();
    const started = performance.now();
    const res = await fetch(`${stackInfo().apiUrl}/v1/api/chat/stream`, {
      method: 'POST',
      headers: { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ session_id: session, message: '[[fake:pace-200-1500-8]] tell me a story' }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    const frames: Record<string, unknown>[] = [];
    let text = '';
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const parsed = JSON.parse(data.slice(6)) as { delta?: string };
        frames.push(parsed);
        if (parsed.delta) {
          text += parsed.delta;
          arrivals.push(performance.now() - started);
        }
      }
    }
    // A whole answer: no error frame (shown whole if there is one), and the end frame last.
    expect(frames.filter((f) => 'error' in f)).toEqual([]);
    expect(frames.at(-1)).toMatchObject({ done: true });
    // Pieces arrived spread over the model's 1.3 s of streaming, not in one lump at the end.
    expect(arrivals.length).toBeGreaterThan(3);
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThan(500);
    const stored = await testDb().query<{ text: string }>(
      `SELECT text FROM messages WHERE session_id = $1 AND author = 'bot'`,
      [session],
    );
    expect(stored.rows.map((r) => r.text)).toEqual([text]);
  });
});
