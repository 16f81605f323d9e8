import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { findPrincipal } from '../../lib/auth';
import { PAIRING_CODE_ALPHABET } from '../../lib/builder/pairing';
import { hashKey } from '../../lib/keys';
import { LIMITS } from '../../lib/limits';
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
import { addMember, sessionOf } from '../support/members';
import { stackInfo } from '../support/stack-info';

/**
 * Builder key pairing (contract, Builder key pairing; docs/decisions/067-pairing-flow.md): start, poll, the approval page's calls, and the
 * limits. Runs on an API of its own behind a trusted proxy, so each test is a client address of its own and the
 * per-address limits of one test do not touch another's.
 */
let api: InProcessApi;
let other: InProcessApi;
beforeAll(async () => {
  [api, other] = await Promise.all([
    startInProcessApi({ TRUST_PROXY: 'true' }),
    startInProcessApi({ TRUST_PROXY: 'true', DASHBOARD_URL: 'https://dash.example.test/' }),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.close(), other?.close()]);
});

function client(ip = uniqueClientAddress()) {
  const at = (path: string, init: Parameters<typeof http>[1] = {}) =>
    http(path, { ...init, baseUrl: api.url, headers: { 'X-Forwarded-For': ip, ...(init.headers ?? {}) } });
  return {
    ip,
    start: (device: unknown = 'Claude Desktop') => at('/v1/mcp-pair/start', { body: { device } }),
    poll: (code: string, secret: string) =>
      at(`/v1/mcp-pair/poll?code=${encodeURIComponent(code)}&secret=${encodeURIComponent(secret)}`),
  };
}

const describePairing = (code: string, session: Record<string, string>) =>
  http(`/v1/dashboard/mcp-pair/${encodeURIComponent(code)}`, { baseUrl: api.url, headers: session });
const approve = (code: string, session: Record<string, string>) =>
  http(`/v1/dashboard/mcp-pair/${encodeURIComponent(code)}/approve`, {
    method: 'POST',
    baseUrl: api.url,
    headers: session,
  });

async function pairingRow(code: string) {
  const res = await testDb().query(`SELECT * FROM builder_pairings WHERE code = $1`, [code.replace('-', '')]);
  return res.rows[0];
}

describe('starting a pairing', () => {
  it('answers the approval page address, a typable code, a secret, the lifetime and the poll interval', async () => {
    const c = client();
    const res = await c.start('  Claude Desktop on my laptop  ');
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { verify_url, code, secret, expires_in, interval } = res.body;
    expect(code).toMatch(new RegExp(`^[${PAIRING_CODE_ALPHABET}]{4}-[${PAIRING_CODE_ALPHABET}]{4}$`));
    // The platform's configured address (PUBLIC_BASE_URL; this API has no DASHBOARD_URL), never the request's Host.
    expect(verify_url).toBe(`${stackInfo().env.PUBLIC_BASE_URL}/connect?code=${code}`);
    expect(secret).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(expires_in).toBeGreaterThan(LIMITS.pairing.lifetimeSeconds - 5);
    expect(expires_in).toBeLessThanOrEqual(LIMITS.pairing.lifetimeSeconds);
    expect(LIMITS.pairing.lifetimeSeconds).toBe(600);
    expect(interval).toBe(LIMITS.pairing.pollIntervalSeconds);

    // Stored trimmed; the secret only as its hash.
    const row = await pairingRow(code);
    expect(row.device).toBe('Claude Desktop on my laptop');
    expect(row.status).toBe('pending');
    expect(Buffer.compare(row.secret_hash, hashKey(secret))).toBe(0);
    expect(JSON.stringify(row)).not.toContain(secret);

    const poll = await c.poll(code, secret);
    expect(poll.status).toBe(200);
    expect(poll.body).toEqual({ status: 'pending' });
  });

  it('puts the dashboard address in verify_url when DASHBOARD_URL is set', async () => {
    const res = await http('/v1/mcp-pair/start', {
      baseUrl: other.url,
      body: { device: 'Cursor' },
      headers: { 'X-Forwarded-For': uniqueClientAddress() },
    });
    expect(res.status).toBe(201);
    expect(res.body.verify_url).toBe(`https://dash.example.test/connect?code=${res.body.code}`);
  });

  it('takes a device name of 1 to 100 characters, trimmed, without control characters', async () => {
    const c = client();
    const max = LIMITS.pairing.deviceChars;
    expect(max).toBe(100);
    expect((await c.start('d'.repeat(max))).status).toBe(201);
    for (const device of ['d'.repeat(max + 1), '', '   ', 'two\nlines', 42, null]) {
      const res = await c.start(device);
      expect([JSON.stringify(device), res.status, res.body.code]).toEqual([JSON.stringify(device), 400, 'bad_request']);
    }
    const none = await http('/v1/mcp-pair/start', { baseUrl: api.url, body: {}, headers: { 'X-Forwarded-For': c.ip } });
    expect([none.status, none.body.code]).toEqual([400, 'bad_request']);
  });

  it(`allows ${LIMITS.pairing.startsPerAddress} starts a minute per client address, then 429 rate_limited`, async () => {
    await inOneRateWindow(8_000);
    const c = client();
    const statuses: number[] = [];
    for (let i = 0; i < LIMITS.pairing.startsPerAddress; i++) statuses.push((await c.start()).status);
    expect(statuses).toEqual(Array(LIMITS.pairing.startsPerAddress).fill(201));
    const over = await c.start();
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Another address has its own budget.
    expect((await client().start()).status).toBe(201);
  });

  it(`allows ${LIMITS.pairing.pollsPerAddress} polls a minute per client address, then 429 rate_limited`, async () => {
    await inOneRateWindow(8_000);
    const c = client();
    const started = (await c.start()).body;
    const results = await Promise.all(
      Array.from({ length: LIMITS.pairing.pollsPerAddress }, () => c.poll(started.code, started.secret)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(LIMITS.pairing.pollsPerAddress).fill(200));
    const over = await c.poll(started.code, started.secret);
    expect([over.status, over.body.code]).toEqual([429, 'rate_limited']);
    expect(over.headers.get('retry-after')).toBeTruthy();
  });
});

describe('approving and collecting', () => {
  it(`a person looks codes up or approves them ${LIMITS.pairing.checksPerPerson} times a minute, then 429`, async () => {
    await inOneRateWindow(8_000);
    const bot = await newBot();
    const owner = await ownerSession(bot);
    // Someone trying codes: each guess is a look-up or an approval.
    const guesses = Array.from({ length: LIMITS.pairing.checksPerPerson }, (_, i) =>
      i % 2 ? describePairing(`ABCD-EF${String(i).padStart(2, '0')}`, owner) : approve(`WXYZ-QR${i}`, owner),
    );
    const answered = await Promise.all(guesses);
    expect(answered.every((r) => r.status === 404)).toBe(true);
    const over = await describePairing('ABCD-EFGH', owner);
    expect([over.status, over.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another person has their own budget.
    const other = await ownerSession(await newBot());
    expect((await describePairing('ABCD-EFGH', other)).status).toBe(404);
  });

  it('an owner approves; the client collects a workspace builder key ck_ exactly once, then expired', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start('Claude Desktop')).body;

    const seen = await describePairing(code, owner);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ code, device: 'Claude Desktop', status: 'pending', expires_at: expect.any(Number) });
    expect(seen.body.expires_at).toBeGreaterThan(Date.now() + 500_000);

    const approved = await approve(code, owner);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ code, device: 'Claude Desktop', status: 'approved' });
    expect(approved.text).not.toMatch(/ck_/);
    // Sealed while it waits for the client: not the key in clear.
    const waiting = await pairingRow(code);
    expect(waiting.status).toBe('approved');
    expect(waiting.key_sealed).toMatch(/^v1\./);

    const first = await c.poll(code, secret);
    expect(first.status).toBe(200);
    // The client learns which workspace it joined, to tell its user where changes will land.
    const joined = await testDb().query<{ name: string }>(`SELECT name FROM workspaces WHERE id = $1`, [
      bot.workspace_id,
    ]);
    expect(first.body).toEqual({
      status: 'ok',
      constructor_key: expect.stringMatching(/^ck_[A-Za-z0-9]{32}$/),
      workspace: { id: bot.workspace_id, name: joined.rows[0].name },
    });
    const key: string = first.body.constructor_key;
    expect(waiting.key_sealed).not.toContain(key);

    // Exactly once: the sealed copy is gone and every later poll is `expired`.
    expect(await c.poll(code, secret)).toMatchObject({ status: 200, body: { status: 'expired' } });
    const collected = await pairingRow(code);
    expect(collected.status).toBe('collected');
    expect(collected.key_sealed).toBeNull();
    expect((await describePairing(code, owner)).body.status).toBe('collected');

    // A key of the whole workspace, issued through pairing, that the platform accepts as a builder key.
    const keyRow = (await testDb().query(`SELECT * FROM api_keys WHERE key_hash = $1`, [hashKey(key)])).rows[0];
    expect(keyRow).toMatchObject({
      workspace_id: bot.workspace_id,
      bot_id: null,
      kind: 'builder',
      issued_via: 'pairing',
      revoked_at: null,
    });
    expect(await findPrincipal(testDb(), key)).toMatchObject({
      kind: 'builder',
      botId: null,
      workspaceId: bot.workspace_id,
    });
    // The builder key the bot was created with is untouched.
    expect(await findPrincipal(testDb(), bot.keys.builder_key)).toMatchObject({ kind: 'builder' });
  });

  it('accepts the code as people type it: lower case, with or without the dash', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start()).body;
    const typed = code.replace('-', '').toLowerCase();
    expect((await describePairing(typed, owner)).body.code).toBe(code);
    expect((await approve(`${typed.slice(0, 4)} ${typed.slice(4)}`, owner)).status).toBe(200);
    expect((await c.poll(typed, secret)).body.status).toBe('ok');
  });

  it('a wrong secret is answered expired and consumes nothing; the right one still collects', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start()).body;
    // Before approval: a wrong secret cannot tell pending from unknown.
    expect((await c.poll(code, `${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`)).body).toEqual({
      status: 'expired',
    });
    await approve(code, owner);
    for (const wrong of ['x', secret.toLowerCase() === secret ? secret.toUpperCase() : secret.toLowerCase()]) {
      const res = await c.poll(code, wrong);
      expect([res.status, res.body]).toEqual([200, { status: 'expired' }]);
    }
    expect((await pairingRow(code)).status).toBe('approved');
    const right = await c.poll(code, secret);
    expect(right.body.status).toBe('ok');
  });

  it('an unknown or malformed code is expired on poll and 404 not_found on the page', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    for (const code of ['AAAA-AAAA', 'not a code', 'ABCD-EFG0']) {
      expect((await c.poll(code, 'whatever')).body).toEqual({ status: 'expired' });
      expect([(await describePairing(code, owner)).body.code]).toEqual(['not_found']);
      expect([(await approve(code, owner)).body.code]).toEqual(['not_found']);
    }
    // The query is required.
    const missing = await http('/v1/mcp-pair/poll?code=AAAA-AAAA', {
      baseUrl: api.url,
      headers: { 'X-Forwarded-For': c.ip },
    });
    expect([missing.status, missing.body.code]).toEqual([400, 'bad_request']);
  });

  it('a pairing past its lifetime is expired: not shown, not approved, not collected', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start()).body;
    await testDb().query(`UPDATE builder_pairings SET expires_at = now() - interval '1 second' WHERE code = $1`, [
      code.replace('-', ''),
    ]);
    expect((await c.poll(code, secret)).body).toEqual({ status: 'expired' });
    expect([(await describePairing(code, owner)).status]).toEqual([404]);
    const late = await approve(code, owner);
    expect([late.status, late.body.code]).toEqual([404, 'not_found']);
    expect(
      await testDb().query(`SELECT 1 FROM api_keys WHERE workspace_id = $1 AND bot_id IS NULL`, [bot.workspace_id]),
    ).toMatchObject({ rowCount: 0 });
  });

  it('a key approved but never collected in time is revoked and its sealed copy erased', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start()).body;
    expect((await approve(code, owner)).status).toBe(200);
    const { api_key_id } = await pairingRow(code);
    await testDb().query(`UPDATE builder_pairings SET expires_at = now() - interval '1 second' WHERE code = $1`, [
      code.replace('-', ''),
    ]);
    expect((await c.poll(code, secret)).body).toEqual({ status: 'expired' });
    const row = await pairingRow(code);
    expect([row.status, row.key_sealed]).toEqual(['lapsed', null]);
    const key = (await testDb().query(`SELECT revoked_at FROM api_keys WHERE id = $1`, [api_key_id])).rows[0];
    expect(key.revoked_at).toBeInstanceOf(Date);
  });

  it('approval gives the client at least the grace period to collect, even at the last second', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code, secret } = (await c.start()).body;
    await testDb().query(`UPDATE builder_pairings SET expires_at = now() + interval '2 seconds' WHERE code = $1`, [
      code.replace('-', ''),
    ]);
    const approved = await approve(code, owner);
    expect(approved.body.expires_at).toBeGreaterThan(Date.now() + (LIMITS.pairing.collectGraceSeconds - 5) * 1000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await c.poll(code, secret)).body.status).toBe('ok');
  });

  it('a member cannot approve (403 forbidden) but may see the request', async () => {
    const bot = await newBot();
    const member = await sessionOf(await addMember(bot));
    const c = client();
    const { code, secret } = (await c.start('Zed')).body;
    expect((await describePairing(code, member)).body).toMatchObject({ device: 'Zed', status: 'pending' });
    const refused = await approve(code, member);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: expect.stringMatching(/owner/), code: 'forbidden' });
    expect((await pairingRow(code)).status).toBe('pending');
    expect((await c.poll(code, secret)).body).toEqual({ status: 'pending' });
    // The owner still can.
    expect((await approve(code, await ownerSession(bot))).status).toBe(200);
  });

  it('approving a second client does not disconnect the first: both keys keep working', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const keys: string[] = [];
    for (const device of ['Claude Desktop', 'Cursor']) {
      const c = client();
      const { code, secret } = (await c.start(device)).body;
      expect((await approve(code, owner)).status).toBe(200);
      keys.push((await c.poll(code, secret)).body.constructor_key);
    }
    expect(keys[0]).not.toBe(keys[1]);
    for (const key of keys) {
      expect(await findPrincipal(testDb(), key)).toMatchObject({ kind: 'builder', workspaceId: bot.workspace_id });
    }
    const rows = await testDb().query(
      `SELECT revoked_at FROM api_keys WHERE workspace_id = $1 AND kind = 'builder' AND issued_via = 'pairing'`,
      [bot.workspace_id],
    );
    expect(rows.rows).toEqual([{ revoked_at: null }, { revoked_at: null }]);
  });

  it('approving twice in the same workspace issues one key; another workspace sees the code as unknown', async () => {
    const bot = await newBot();
    const stranger = await newBot();
    const owner = await ownerSession(bot);
    const c = client();
    const { code } = (await c.start()).body;
    expect((await approve(code, owner)).status).toBe(200);
    expect((await approve(code, owner)).body.status).toBe('approved');
    const keys = await testDb().query(`SELECT 1 FROM api_keys WHERE workspace_id = $1 AND bot_id IS NULL`, [
      bot.workspace_id,
    ]);
    expect(keys.rowCount).toBe(1);
    const strangerSession = await ownerSession(stranger);
    expect((await describePairing(code, strangerSession)).status).toBe(404);
    expect((await approve(code, strangerSession)).status).toBe(404);
  });

  it('the approval calls need a session and refuse writes from other sites', async () => {
    const bot = await newBot();
    const c = client();
    const { code } = (await c.start()).body;
    expect((await describePairing(code, {})).body.code).toBe('unauthorized');
    expect((await approve(code, {})).body.code).toBe('unauthorized');
    const forged = await rawRequest(`${api.url}/v1/dashboard/mcp-pair/${code}/approve`, {
      method: 'POST',
      headers: { ...(await ownerSession(bot)), Origin: 'https://evil.example', 'X-Forwarded-For': c.ip },
    });
    expect([forged.status, forged.body.code]).toEqual([403, 'forbidden']);
    expect((await pairingRow(code)).status).toBe('pending');
  });
});

describe('GET /v1/auth/me', () => {
  it('answers the signed-in user with their role and workspace, or 401', async () => {
    const bot = await newBot({ workspaceName: 'Acme support' });
    const me = await http('/v1/auth/me', { headers: await ownerSession(bot) });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      user: { id: bot.user_id, email: bot.email, name: null, role: 'owner', email_verified: true },
      workspace: { id: bot.workspace_id, name: 'Acme support', credits_awaiting_confirmation: 0 },
    });
    const member = await addMember(bot);
    expect((await http('/v1/auth/me', { headers: await sessionOf(member) })).body.user).toEqual({
      id: member.userId,
      email: member.email,
      name: null,
      role: 'operator',
      email_verified: true,
    });
    const anonymous = await http('/v1/auth/me');
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'unauthorized']);
  });
});

describe('the dashboard pages', () => {
  it('/connect is the built app, never cached stale, never framed; its assets are immutable', async () => {
    const page = await http('/connect?code=ABCD-EFGH');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    for (const asset of assets) {
      const res = await http(asset);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // node:http, since fetch() adds `Cache-Control: no-cache` to a conditional request it did not make itself.
      const again = await rawRequest(`${stackInfo().apiUrl}${asset}`, {
        headers: { 'If-None-Match': res.headers.get('etag')! },
      });
      expect(again.status).toBe(304);
    }
    expect((await http('/app/assets/nothing-here.js')).status).toBe(404);
    expect((await http('/app/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
