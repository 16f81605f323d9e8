import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, inOneRateWindow, newBot, startOwnPlatform, testDb } from '../support/helpers';

const runsOf = async (botId: string) =>
  (await testDb().query(`SELECT count(*)::int AS n FROM runs WHERE bot_id = $1`, [botId])).rows[0].n;

describe('Idempotency-Key', () => {
  it('replays the stored response with Idempotency-Replayed: true and runs the action once', async () => {
    const bot = await newBot();
    const body = { session_id: randomUUID(), message: 'once only' };
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await http('/v1/api/chat', { key: bot.keys.secret_key, body, headers });
    const second = await http('/v1/api/chat', { key: bot.keys.secret_key, body, headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await runsOf(bot.bot_id)).toBe(1);
  });

  it('the same key with a different body is 409 idempotency_key_reused', async () => {
    const bot = await newBot();
    const headers = { 'Idempotency-Key': randomUUID() };
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'one' }, headers });
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'two' }, headers });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('idempotency_key_reused');
  });

  it('keys are scoped to the API key: another bot may use the same key', async () => {
    const a = await newBot();
    const b = await newBot();
    const headers = { 'Idempotency-Key': 'shared-key-1' };
    const ra = await http('/v1/api/chat', { key: a.keys.secret_key, body: { message: 'same' }, headers });
    const rb = await http('/v1/api/chat', { key: b.keys.secret_key, body: { message: 'same' }, headers });
    expect(rb.headers.get('idempotency-replayed')).toBeNull();
    expect(rb.body.session_id).not.toBe(ra.body.session_id);
  });

  it('concurrent identical requests run once: the others replay or get 409 idempotency_in_progress', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET model = 'fake-slow-800' WHERE id = $1`, [bot.bot_id]);
    const body = { session_id: randomUUID(), message: 'race' };
    const headers = { 'Idempotency-Key': randomUUID() };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => http('/v1/api/chat', { key: bot.keys.secret_key, body, headers })),
    );
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(5);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) {
      expect(r.body.code).toBe('idempotency_in_progress');
      // The owner is alive and renewing its lease: its answer may come any moment.
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(await runsOf(bot.bot_id)).toBe(1);
  });

  it('5xx responses are not stored: a retry runs again', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET model = 'fake-fail-500' WHERE id = $1`, [bot.bot_id]);
    const body = { session_id: randomUUID(), message: 'fails' };
    const headers = { 'Idempotency-Key': randomUUID() };
    expect((await http('/v1/api/chat', { key: bot.keys.secret_key, body, headers })).status).toBe(503);
    await testDb().query(`UPDATE bots SET model = NULL WHERE id = $1`, [bot.bot_id]);
    const retry = await http('/v1/api/chat', { key: bot.keys.secret_key, body, headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
  });

  it('operator replies and handoff honour it too', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'hello' } });
    const h = { 'Idempotency-Key': randomUUID() };
    await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session }, headers: h });
    expect(
      (
        await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session }, headers: h })
      ).headers.get('idempotency-replayed'),
    ).toBe('true');
    const r = { 'Idempotency-Key': randomUUID() };
    const first = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'hi' },
      headers: r,
    });
    const again = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'hi' },
      headers: r,
    });
    expect(again.body).toEqual(first.body);
    const ops = await testDb().query(
      `SELECT count(*)::int AS n FROM messages WHERE session_id = $1 AND author = 'operator'`,
      [session],
    );
    expect(ops.rows[0].n).toBe(1);
  });
});

describe('rate limits', () => {
  it('the dialogue group allows 60 requests a minute per key and IP; the 61st is 429 rate_limited', async () => {
    const bot = await newBot();
    await inOneRateWindow(15_000);
    // DELETE of an unknown knowledge source is cheap and counts in the dialogue group.
    let last;
    for (let i = 1; i <= 60; i++) {
      last = await http(`/v1/api/knowledge/nope-${i}`, { method: 'DELETE', key: bot.keys.secret_key });
      expect([i, last.status]).toEqual([i, 404]);
    }
    expect(last!.headers.get('ratelimit-limit')).toBe('60');
    expect(last!.headers.get('ratelimit-remaining')).toBe('0');
    const over = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'one too many' } });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(Number(over.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    // Reads have their own budget: polling still works.
    const poll = await http('/v1/api/messages?session_id=x', { key: bot.keys.secret_key });
    expect(poll.status).toBe(200);
    expect(poll.headers.get('ratelimit-limit')).toBe('240');
    expect(poll.headers.get('ratelimit-remaining')).toBe('239');
  }, 90_000);

  it('RATE_LIMIT_DIALOGUE and RATE_LIMIT_READS set the limits per key and IP: the headers say them, and the next one is 429', async () => {
    const own = await startOwnPlatform('rate-limits', { RATE_LIMIT_DIALOGUE: '3', RATE_LIMIT_READS: '250' });
    try {
      const bot = await newBot();
      await inOneRateWindow(15_000);
      const call = (i: number) =>
        http(`/v1/api/knowledge/nope-${i}`, { method: 'DELETE', key: bot.keys.secret_key, baseUrl: own.baseUrl });
      for (let i = 1; i <= 3; i++) {
        const res = await call(i);
        expect([i, res.status, res.headers.get('ratelimit-limit')]).toEqual([i, 404, '3']);
      }
      const over = await call(4);
      expect(over.status).toBe(429);
      expect(over.body.code).toBe('rate_limited');
      const poll = await http('/v1/api/messages?session_id=x', { key: bot.keys.secret_key, baseUrl: own.baseUrl });
      expect(poll.status).toBe(200);
      expect(poll.headers.get('ratelimit-limit')).toBe('250');
      expect(poll.headers.get('ratelimit-remaining')).toBe('249');
    } finally {
      await own.stop();
    }
  }, 120_000);

  it('RateLimit headers are on every /v1/api/* response, errors included', async () => {
    for (const res of [await http('/v1/api/messages?session_id=x'), await http('/v1/api/unknown')]) {
      expect(res.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
      expect(res.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
      expect(res.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
    }
  });
});

describe('rate limits under concurrency', () => {
  it('70 simultaneous requests of one client: exactly 60 pass, each with its own RateLimit-Remaining', async () => {
    const bot = await newBot();
    await inOneRateWindow(10_000);
    const results = await Promise.all(
      Array.from({ length: 70 }, (_, i) =>
        http(`/v1/api/knowledge/nope-${i}`, { method: 'DELETE', key: bot.keys.secret_key }),
      ),
    );
    const passed = results.filter((r) => r.status === 404);
    const limited = results.filter((r) => r.status === 429);
    expect(passed).toHaveLength(60);
    expect(limited).toHaveLength(10);
    const remaining = passed.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
  }, 90_000);
});
