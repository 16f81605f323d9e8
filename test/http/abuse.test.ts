import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import {
  http,
  inOneRateWindow,
  newBot,
  ownerSession,
  rawRequest,
  testDb,
  uniqueClientAddress,
} from '../support/helpers';
import { type InProcessApi, startInProcessApi } from '../support/in-process-api';

/**
 * The doors an abuser would try, on an API of the test's own (in this process) configured the way production runs
 * behind a load balancer: TRUST_PROXY with one hop, an https public address, a metrics token, a one-minute trigger
 * minimum.
 */
let api: InProcessApi;
beforeAll(async () => {
  api = await startInProcessApi({
    TRUST_PROXY: 'true',
    TRUST_PROXY_HOPS: '1',
    PUBLIC_BASE_URL: 'https://api.example.test',
    METRICS_TOKEN: 'metrics-token-for-tests-0123456789',
    TRIGGER_MIN_INTERVAL_SECONDS: '60',
  });
});
afterAll(() => api?.close());

const at = (path: string, init: Parameters<typeof http>[1] = {}) => http(path, { ...init, baseUrl: api.url });
/** A client address as our own load balancer reports it (the rightmost entry), after whatever the client sent. */
const via = (clientSent: string, ip: string) => ({ 'X-Forwarded-For': `${clientSent}, ${ip}` });
/** The owner's session on this API, whose https public address names the cookie `__Host-ap_session`. */
async function sessionAt(bot: { email: string; password: string }): Promise<Record<string, string>> {
  const res = await at('/v1/auth/login', { body: { email: bot.email, password: bot.password } });
  return { Cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
}

describe('client addresses behind trusted proxies', () => {
  it('the entry the client writes itself cannot pick a fresh rate-limit bucket', async () => {
    const bot = await newBot();
    const ip = uniqueClientAddress();
    await inOneRateWindow(5_000);
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await at('/v1/api/messages?session_id=x', {
        key: bot.keys.secret_key,
        headers: via(`10.${i}.${i}.${i}`, ip),
      });
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([239, 238, 237, 236]);
  });

  it('an entry that is not an IP address counts as the connection itself, not as a new client', async () => {
    const bot = await newBot();
    await inOneRateWindow(5_000);
    const first = await at('/v1/api/messages?session_id=x', {
      key: bot.keys.secret_key,
      headers: via('x', 'not-an-ip'),
    });
    const second = await at('/v1/api/messages?session_id=x', {
      key: bot.keys.secret_key,
      headers: via('y', 'garbage!'),
    });
    expect(first.status).toBe(200);
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
      Number(first.headers.get('ratelimit-remaining')) - 1,
    );
  });
});

describe('sign-in', () => {
  it('failed attempts slow the account down from the 5th: 429 with Retry-After for every address, then it passes', async () => {
    const bot = await newBot();
    const headers = via('1.1.1.1', uniqueClientAddress());
    const elsewhereIp = uniqueClientAddress();
    for (let i = 0; i < 5; i++) {
      const res = await at('/v1/auth/login', { body: { email: bot.email, password: 'wrong' }, headers });
      expect([i, res.status]).toEqual([i, 401]);
    }
    const limited = await at('/v1/auth/login', { body: { email: bot.email, password: bot.password }, headers });
    expect([limited.status, limited.body.code]).toEqual([429, 'rate_limited']);
    const wait = Number(limited.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    const elsewhereNow = await at('/v1/auth/login', {
      body: { email: bot.email, password: bot.password },
      headers: via('x', elsewhereIp),
    });
    expect(elsewhereNow.status).toBe(429);
    // A slow-down, not a lock-out: once it has passed the right password signs in.
    await new Promise((r) => setTimeout(r, wait * 1000 + 200));
    const elsewhere = await at('/v1/auth/login', {
      body: { email: bot.email, password: bot.password },
      headers: via('x', elsewhereIp),
    });
    expect(elsewhere.status).toBe(200);
  });

  it('failed attempts are limited per address across e-mails', async () => {
    const headers = via('1.1.1.1', uniqueClientAddress());
    await inOneRateWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push(
        (await at('/v1/auth/login', { body: { email: `nobody-${i}@example.com`, password: 'x' }, headers })).status,
      );
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
  });

  it('passwords are argon2id at OWASP parameters; an older scrypt hash is upgraded at the next sign-in', async () => {
    const bot = await newBot();
    const stored = await testDb().query(`SELECT password_hash FROM users WHERE id = $1`, [bot.user_id]);
    expect(stored.rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // The platform's earlier format: scrypt N=2^14 with a random salt.
    const salt = Buffer.from(randomUUID());
    const digest = (await promisify(scrypt)(bot.password, salt, 32)) as Buffer;
    await testDb().query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [
      bot.user_id,
      `scrypt$${salt.toString('base64url')}$${digest.toString('base64url')}`,
    ]);
    expect((await ownerSession(bot)).Cookie).toContain('ap_session=');
    const upgraded = await testDb().query(`SELECT password_hash FROM users WHERE id = $1`, [bot.user_id]);
    expect(upgraded.rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await ownerSession(bot)).Cookie).toContain('ap_session=');
  });

  it('with an https public address the cookie is __Host- and Secure, also when the balancer says nothing; never a 500', async () => {
    const bot = await newBot();
    const body = { email: bot.email, password: bot.password };
    const tls = await at('/v1/auth/login', { body, headers: { 'X-Forwarded-Proto': 'https' } });
    expect(tls.status).toBe(200);
    expect(tls.headers.get('set-cookie')).toMatch(/^__Host-ap_session=.*; secure/i);
    const plain = await at('/v1/auth/login', { body });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('set-cookie')).toMatch(/^__Host-ap_session=.*; secure/i);
  });

  it('with a plain-http public address (a local set-up) the cookie is ap_session and not Secure', async () => {
    const bot = await newBot();
    const res = await http('/v1/auth/login', { body: { email: bot.email, password: bot.password } });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/^ap_session=/);
    expect(res.headers.get('set-cookie')).not.toMatch(/; secure/i);
  });
});

describe('cookie-authenticated writes from other sites', () => {
  it('a text/plain or cross-site POST changes nothing; the dashboard’s own JSON requests work', async () => {
    const bot = await newBot();
    const session = await sessionAt(bot);
    // fetch() will not send Origin or Sec-Fetch-Site, which browsers set themselves: node:http does.
    const patch = (headers: Record<string, string>, body: string) =>
      rawRequest(`${api.url}/v1/dashboard/bots/${bot.bot_id}`, {
        method: 'PATCH',
        body,
        headers: { ...session, ...headers },
      });
    const form = await patch({ 'Content-Type': 'text/plain' }, '{"name":"pwned"}');
    expect([form.status, form.body.code]).toEqual([415, 'unsupported_media_type']);
    const crossOrigin = await patch(
      { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
      '{"name":"pwned"}',
    );
    expect([crossOrigin.status, crossOrigin.body.code]).toEqual([403, 'forbidden']);
    const crossSite = await patch(
      { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'cross-site' },
      '{"name":"pwned"}',
    );
    expect([crossSite.status, crossSite.body.code]).toEqual([403, 'forbidden']);
    const rotate = await rawRequest(`${api.url}/v1/dashboard/bots/${bot.bot_id}/secret`, {
      method: 'POST',
      headers: { ...session, Origin: 'https://evil.example' },
    });
    expect(rotate.status).toBe(403);
    expect((await http('/v1/api/messages?session_id=x', { key: bot.keys.secret_key })).status).toBe(200); // key unchanged
    const name = await testDb().query(`SELECT name FROM bots WHERE id = $1`, [bot.bot_id]);
    expect(name.rows[0].name).not.toBe('pwned');
    const own = await patch(
      { 'Content-Type': 'application/json', Origin: 'https://api.example.test', 'Sec-Fetch-Site': 'same-origin' },
      '{"name":"mine"}',
    );
    expect([own.status, own.body.name]).toEqual([200, 'mine']);
  });
});

describe('trigger schedules', () => {
  it('the minimum interval applies to cron too; a field a kind does not use is refused', async () => {
    const bot = await newBot();
    const session = await sessionAt(bot);
    const create = (body: Record<string, unknown>) =>
      at(`/v1/dashboard/bots/${bot.bot_id}/triggers`, { body, headers: session });
    for (const cron of ['@every 1s', '@every 30s', 'not a cron']) {
      const res = await create({ kind: 'schedule', task: 't', schedule: { cron } });
      expect([cron, res.status, res.body.code]).toEqual([cron, 400, 'bad_request']);
    }
    const ok = await create({ kind: 'schedule', task: 't', schedule: { cron: '*/5 * * * *' } });
    expect(ok.status).toBe(201);
    const poll = await create({
      kind: 'poll',
      task: 't',
      poll: { url: 'https://example.com', every_seconds: 300 },
      schedule: { every_seconds: 300 },
    });
    expect([poll.status, poll.body.error]).toEqual([400, expect.stringContaining('schedule')]);
    const sched = await create({
      kind: 'schedule',
      task: 't',
      schedule: { every_seconds: 300 },
      poll: { url: 'https://example.com', every_seconds: 300 },
    });
    expect(sched.status).toBe(400);
    const fast = await at(`/v1/dashboard/bots/${bot.bot_id}/triggers/${ok.body.id}`, {
      method: 'PATCH',
      body: { schedule: { cron: '@every 10s' } },
      headers: session,
    });
    expect(fast.status).toBe(400);
    await at(`/v1/dashboard/bots/${bot.bot_id}/triggers/${ok.body.id}`, { method: 'DELETE', headers: session });
  }, 30_000);
});

describe('operations endpoints', () => {
  it('/metrics needs the bearer token when one is configured', async () => {
    expect((await at('/metrics')).status).toBe(401);
    expect((await at('/metrics', { headers: { Authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(401);
    const ok = await at('/metrics', { headers: { Authorization: 'Bearer metrics-token-for-tests-0123456789' } });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('http_requests_total');
  });

  it('/readyz names the failing dependency without its error text', async () => {
    const down = await startInProcessApi({ DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' });
    try {
      const res = await http('/readyz', { baseUrl: down.url });
      expect(res.status).toBe(503);
      expect(res.body.checks).toEqual({ postgres: 'unavailable', temporal: 'ok' });
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|nobody|secret/);
    } finally {
      await down.close();
    }
  });
});
