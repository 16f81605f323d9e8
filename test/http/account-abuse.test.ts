import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { type FakeSmtp, parseMessage, startFakeSmtp } from '../support/fake-smtp';
import {
  http,
  inOneRateWindow,
  newBot,
  ownerSession,
  testDb,
  uniqueClientAddress,
  waitUntil,
} from '../support/helpers';
import { type InProcessApi, type MailingApi, startInProcessApi, startMailingApi } from '../support/in-process-api';
import { stackInfo } from '../support/stack-info';

/**
 * The accounts surface as an attacker tries it (issue 17): links in e-mails that a request's headers could redirect,
 * guessing passwords in parallel, making the API hash passwords for nothing, and flooding people with invitations.
 * E-mails go to a real SMTP peer (test/support/fake-smtp.ts) from an API of this file's own, started without any
 * configured public address and trusting proxy headers — the set-up the takeover worked against.
 */
const unique = () => `person+${randomBytes(6).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery';

/** A POST with headers fetch will not send as given (`Host`), through node:http. */
function rawPost(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const url = new URL(path, baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const ATTACKER = { Host: 'attacker.example', 'X-Forwarded-Host': 'attacker.example', 'X-Forwarded-Proto': 'https' };

let own: MailingApi;
let smtp: FakeSmtp;
let api: InProcessApi;
beforeAll(async () => {
  own = await startMailingApi({ PUBLIC_BASE_URL: undefined, DASHBOARD_URL: undefined, TRUST_PROXY: 'true' });
  ({ smtp, api } = own);
});
afterAll(() => own.close());

const mailTo = async (email: string) =>
  parseMessage(
    (await waitUntil(`the e-mail to ${email}`, async () => smtp.messages.find((m) => m.to.includes(email))))!.data,
  );

describe('links in e-mails come from configuration, never from the request', () => {
  const configured = () => `http://localhost:${stackInfo().env.PORT}`;

  it("a reset requested with an attacker's Host mails a link to the platform's own address", async () => {
    const bot = await newBot();
    const asked = await rawPost(api.url, '/v1/auth/password-reset', { email: bot.email }, ATTACKER);
    expect(asked.status).toBe(202);
    const mail = await mailTo(bot.email);
    expect(mail.text).not.toContain('attacker.example');
    expect(mail.text).toContain(`${configured()}/reset-password`);
  });

  it("an invitation sent with an attacker's Host links to the platform's own address", async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const email = unique();
    const invited = await rawPost(
      api.url,
      '/v1/dashboard/team/invitations',
      { email, role: 'operator' },
      {
        ...ATTACKER,
        ...owner,
      },
    );
    expect(invited.status).toBe(201);
    expect(invited.body.invite_url).toMatch(new RegExp(`^${configured()}/invite`));
    const mail = await mailTo(email);
    expect(mail.text).not.toContain('attacker.example');
    expect(mail.text).toContain(`${configured()}/invite`);
  });
});

describe('guessing passwords', () => {
  it('40 wrong passwords sent at once from 40 addresses: a handful are checked, the rest are 429 before any check', async () => {
    const bot = await newBot();
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        http('/v1/auth/login', {
          body: { email: bot.email, password: 'wrong guess!' },
          baseUrl: api.url,
          headers: { 'X-Forwarded-For': uniqueClientAddress() },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
    expect(results.find((r) => r.status === 429)!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    // Not even the right password gets in while the account is slowed down, from yet another address.
    const right = await http('/v1/auth/login', {
      body: { email: bot.email, password: bot.password },
      baseUrl: api.url,
      headers: { 'X-Forwarded-For': uniqueClientAddress() },
    });
    expect(right.status).toBe(429);
  });

  it('the slow-down passes; the right password then signs in and forgets the failures', async () => {
    const bot = await newBot();
    const login = (password: string) => http('/v1/auth/login', { body: { email: bot.email, password } });
    for (let i = 0; i < 5; i++) expect((await login('wrong guess!')).status).toBe(401);
    const slowed = await login(bot.password);
    expect(slowed.status).toBe(429);
    const wait = Number(slowed.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, wait * 1000 + 200));
    expect((await login(bot.password)).status).toBe(200);
    // The count starts again: four failures are four answers, not a slow-down.
    for (let i = 0; i < 4; i++) expect((await login('wrong guess!')).status).toBe(401);
  });

  it('counts the account the e-mail names, however it is typed: every spelling shares one budget (issue 40, item 9)', async () => {
    const bot = await newBot();
    const [local, domain] = bot.email.split('@');
    // The same account, typed five ways: capitals, spaces around it, full-width letters (NFKC makes them plain).
    const spellings = [
      `${local.toUpperCase()}@${domain.toUpperCase()}`,
      ` ${bot.email} `,
      `\uff4f${bot.email.slice(1)}`,
      `${local}@${domain.replace('example', 'ＥＸＡＭＰＬＥ')}`,
      bot.email,
    ];
    const login = (email: string, password: string) =>
      http('/v1/auth/login', {
        body: { email, password },
        baseUrl: api.url,
        headers: { 'X-Forwarded-For': uniqueClientAddress() },
      });
    for (const email of spellings) expect((await login(email, 'wrong guess!')).status).toBe(401);
    // Five failures of one account: slowed down, whichever spelling comes next, the right password included.
    const slowed = await login(bot.email, bot.password);
    expect([slowed.status, slowed.body.code]).toEqual([429, 'rate_limited']);
    const wait = Number(slowed.headers.get('retry-after'));
    await new Promise((r) => setTimeout(r, wait * 1000 + 200));
    // Any spelling of the address signs in with the right password.
    const signedIn = await login(`  ${local.toUpperCase()}@${domain} `, bot.password);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ user_id: bot.user_id, email: bot.email });
  });

  it('an IPv6 client is counted by its /64: new addresses of the same network do not buy more attempts', async () => {
    await inOneRateWindow();
    const statuses: number[] = [];
    for (let i = 1; i <= 31; i++) {
      const res = await http('/v1/auth/login', {
        body: { email: unique(), password: 'wrong guess!' },
        baseUrl: api.url,
        headers: { 'X-Forwarded-For': `2001:db8:17:42::${i.toString(16)}` },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    // Another /64 is another client.
    const other = await http('/v1/auth/login', {
      body: { email: unique(), password: 'wrong guess!' },
      baseUrl: api.url,
      headers: { 'X-Forwarded-For': '2001:db8:17:43::1' },
    });
    expect(other.status).toBe(401);
  });
});

describe('hashing for nothing', () => {
  it('60 made-up reset tokens at once from one address: the first 20 are 400, the rest 429', async () => {
    const address = uniqueClientAddress();
    await inOneRateWindow(5_000);
    const results = await Promise.all(
      Array.from({ length: 60 }, () =>
        http('/v1/auth/password-reset/confirm', {
          body: { token: randomBytes(30).toString('base64url').slice(0, 40), password: PASSWORD },
          baseUrl: api.url,
          headers: { 'X-Forwarded-For': address },
        }),
      ),
    );
    const codes = results.map((r) => r.body.code);
    expect(codes.filter((c) => c === 'invalid_token')).toHaveLength(20);
    expect(codes.filter((c) => c === 'rate_limited')).toHaveLength(40);
  });

  it('60 invitation acceptances at once from one address: the first 20 are 404, the rest 429', async () => {
    const address = uniqueClientAddress();
    await inOneRateWindow(5_000);
    const results = await Promise.all(
      Array.from({ length: 60 }, () =>
        http('/v1/auth/invitation/accept', {
          body: { token: randomBytes(30).toString('base64url').slice(0, 40), password: PASSWORD },
          baseUrl: api.url,
          headers: { 'X-Forwarded-For': address },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 404)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });

  describe('with one hash at a time and none waiting', () => {
    let tight: InProcessApi;
    beforeAll(async () => {
      tight = await startInProcessApi({
        TRUST_PROXY: 'true',
        PASSWORD_HASH_CONCURRENCY: '1',
        PASSWORD_HASH_QUEUE: '0',
      });
    });
    afterAll(() => tight.close());

    it('a made-up token is refused before any hashing: 40 at once from 40 addresses are all 400, none 503', async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, () =>
          http('/v1/auth/password-reset/confirm', {
            body: { token: randomBytes(30).toString('base64url').slice(0, 40), password: PASSWORD },
            baseUrl: tight.url,
            headers: { 'X-Forwarded-For': uniqueClientAddress() },
          }),
        ),
      );
      expect(new Set(results.map((r) => r.body.code))).toEqual(new Set(['invalid_token']));
    });

    it('a made-up invitation is refused before any hashing: 40 acceptances at once from 40 addresses are all 404, none 503', async () => {
      // Half through the body route, half through the deprecated one with the token in the path: one door each.
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const token = randomBytes(30).toString('base64url').slice(0, 40);
          const init = { baseUrl: tight.url, headers: { 'X-Forwarded-For': uniqueClientAddress() } };
          return i % 2 === 0
            ? http('/v1/auth/invitation/accept', { ...init, body: { token, password: PASSWORD } })
            : http(`/v1/auth/invitations/${token}/accept`, { ...init, body: { password: PASSWORD } });
        }),
      );
      expect(new Set(results.map((r) => `${r.status} ${r.body.code}`))).toEqual(new Set(['404 not_found']));
    });

    it('sign-ins beyond the hashes the API runs at once are 503 at once, with Retry-After: 1', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, () =>
          http('/v1/auth/login', {
            body: { email: unique(), password: 'wrong guess!' },
            baseUrl: tight.url,
            headers: { 'X-Forwarded-For': uniqueClientAddress() },
          }),
        ),
      );
      const busy = results.filter((r) => r.status === 503);
      expect(busy.length).toBeGreaterThan(0);
      expect(busy[0].body.code).toBe('service_unavailable');
      expect(busy[0].headers.get('retry-after')).toBe('1');
      expect(results.filter((r) => r.status === 401).length).toBeGreaterThan(0);
      expect(results.every((r) => r.status === 401 || r.status === 503)).toBe(true);
    });
  });
});

describe('invitation floods', () => {
  it('a workspace sends 20 invitations an hour; the 21st is 429; no subject carries the inviter’s text', async () => {
    const bot = await newBot({ workspaceName: 'Win a prize now' });
    const owner = await ownerSession(bot);
    const invite = (email: string) =>
      http('/v1/dashboard/team/invitations', { body: { email, role: 'operator' }, headers: owner, baseUrl: api.url });
    const first = unique();
    expect((await invite(first)).status).toBe(201);
    // Revoking does not buy more.
    const listed = await http('/v1/dashboard/team', { headers: owner });
    const revoked = await http(`/v1/dashboard/team/invitations/${listed.body.invitations[0].id}`, {
      method: 'DELETE',
      headers: owner,
    });
    expect(revoked.status).toBe(200);
    for (let i = 1; i < 20; i++) expect((await invite(unique())).status).toBe(201);
    const refused = await invite(unique());
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(3500);
    expect(retry).toBeLessThanOrEqual(3600);
    const mail = await mailTo(first);
    expect(mail.subject).toBe("You're invited to a workspace on Agent Platform");
  });

  it('and 50 a day: with 49 sent two hours ago, the 50th is sent and the 51st is 429 until the first is a day old', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    // Sending them through the API would take two and a half hours of the hourly limit: they are written as the API
    // writes them, dated two hours back (out of the hour's count, inside the day's).
    await testDb().query(
      `INSERT INTO invitations (id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
       SELECT 'inv_' || md5(random()::text), $1, 'earlier+' || n || '@example.com', 'operator',
              sha256(gen_random_uuid()::text::bytea), $2, now() - interval '2 hours', now() + interval '7 days'
         FROM generate_series(1, 49) AS n`,
      [bot.workspace_id, bot.user_id],
    );
    const invite = () =>
      http('/v1/dashboard/team/invitations', {
        body: { email: unique(), role: 'operator' },
        headers: owner,
        baseUrl: api.url,
      });
    expect((await invite()).status).toBe(201);
    const refused = await invite();
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    expect(refused.body.error).toMatch(/sent 50 invitations in the last day/);
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(22 * 3600 - 120);
    expect(retry).toBeLessThanOrEqual(22 * 3600);
  });
});

describe('the invitation e-mail (issue 40, item 9)', () => {
  it("quotes the workspace's name as its owner's words: on one line, its addresses defused", async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const name =
      'Acme\r\n\r\nYour account is suspended. Sign in at https://evil.example/login “now”\u202e\tor www.evil.example';
    const renamed = await http('/v1/dashboard/workspace', { method: 'PATCH', headers: owner, body: { name } });
    expect(renamed.status).toBe(200);
    const email = unique();
    const invited = await http('/v1/dashboard/team/invitations', {
      body: { email, role: 'admin' },
      headers: owner,
      baseUrl: api.url,
    });
    expect(invited.status).toBe(201);
    const mail = await mailTo(email);
    expect(mail.subject).toBe("You're invited to a workspace on Agent Platform");
    const quoted =
      "“Acme Your account is suspended. Sign in at https[:]//evil[.]example/login 'now' or www[.]evil[.]example”";
    expect(mail.text).toContain(
      `You are invited to the workspace ${quoted} on Agent Platform, as an admin, by ${bot.email}.`,
    );
    expect(mail.text).toContain('was chosen by its owner, not by Agent Platform');
    // No line of the message is the name's own, and no address of it can become a link.
    expect(mail.text.split(/\r?\n/).some((line) => line.startsWith('Your account'))).toBe(false);
    expect(mail.text).not.toContain('evil.example');
    expect(mail.text).not.toContain('\u202e');
  });
});

describe('reset links', () => {
  it('the answer comes before the e-mail: a slow mail server does not tell which addresses have accounts', async () => {
    const slow = await startFakeSmtp({ greetingDelayMs: 1500 });
    const slowApi = await startInProcessApi({ SMTP_URL: slow.url, TRUST_PROXY: 'true' });
    try {
      const bot = await newBot();
      const asked = await http('/v1/auth/password-reset', { body: { email: bot.email }, baseUrl: slowApi.url });
      expect(asked.status).toBe(202);
      expect(slow.messages.filter((m) => m.to.includes(bot.email))).toHaveLength(0);
      await waitUntil('the e-mail', async () => slow.messages.find((m) => m.to.includes(bot.email)));
    } finally {
      await slowApi.close();
      await slow.close();
    }
  });

  const tokenIn = (text: string) => /reset-password#token=([A-Za-z0-9]+)/.exec(text)![1];

  it('a new reset voids the links sent before it', async () => {
    const bot = await newBot();
    const address = uniqueClientAddress();
    const ask = () =>
      http('/v1/auth/password-reset', {
        body: { email: bot.email },
        baseUrl: api.url,
        headers: { 'X-Forwarded-For': address },
      });
    expect((await ask()).status).toBe(202);
    const firstToken = tokenIn((await mailTo(bot.email)).text);
    expect((await ask()).status).toBe(202);
    const second = await waitUntil('the second e-mail', async () => {
      const mails = smtp.messages.filter((m) => m.to.includes(bot.email));
      return mails.length === 2 ? parseMessage(mails[1].data) : undefined;
    });
    const old = await http('/v1/auth/password-reset/confirm', { body: { token: firstToken, password: PASSWORD } });
    expect([old.status, old.body.code]).toEqual([400, 'invalid_token']);
    const fresh = await http('/v1/auth/password-reset/confirm', {
      body: { token: tokenIn(second.text), password: PASSWORD },
    });
    expect(fresh.status).toBe(200);
  });

  it('a password change voids the reset links sent before it', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    expect((await http('/v1/auth/password-reset', { body: { email: bot.email }, baseUrl: api.url })).status).toBe(202);
    const token = tokenIn((await mailTo(bot.email)).text);
    const changed = await http('/v1/auth/password', {
      body: { current_password: bot.password, new_password: PASSWORD },
      headers: owner,
    });
    expect(changed.status).toBe(200);
    const used = await http('/v1/auth/password-reset/confirm', { body: { token, password: 'yet another password' } });
    expect([used.status, used.body.code]).toEqual([400, 'invalid_token']);
  });
});

describe('invitation tokens stay out of paths and logs', () => {
  it('the path form still answers, deprecated, and the access log writes its template, not the token', async () => {
    const token = randomBytes(30).toString('base64url').slice(0, 40);
    const res = await http(`/v1/auth/invitations/${token}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.headers.get('sunset')).toBeTruthy();
    const logFile = path.join(stackInfo().dataDir, 'logs', 'api.log');
    const line = await waitUntil('the access log line', async () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .find((l) => l.includes('"route":"/v1/auth/invitations/:token"') && l.includes('"status":404')),
    );
    expect(readFileSync(logFile, 'utf8')).not.toContain(token);
    expect(JSON.parse(line).path).toBe('/v1/auth/invitations/:token');
  });
});

describe('the session cookie', () => {
  it('is __Host-ap_session, Secure, Path=/ when the public address is https, and it is the one read', async () => {
    const https = await startInProcessApi({ PUBLIC_BASE_URL: 'https://api.platform.test' });
    try {
      const bot = await newBot();
      const res = await http('/v1/auth/login', {
        body: { email: bot.email, password: bot.password },
        baseUrl: https.url,
      });
      expect(res.status).toBe(200);
      const cookie = res.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^__Host-ap_session=[^;]+;/);
      expect(cookie).toMatch(/; path=\/(;|$)/i);
      expect(cookie).toMatch(/; secure(;|$)/i);
      expect(cookie).toMatch(/; httponly(;|$)/i);
      expect(cookie).not.toMatch(/domain=/i);
      const session = { Cookie: cookie.split(';')[0] };
      expect((await http('/v1/auth/me', { headers: session, baseUrl: https.url })).status).toBe(200);
      const plain = { Cookie: session.Cookie.replace('__Host-ap_session', 'ap_session') };
      expect((await http('/v1/auth/me', { headers: plain, baseUrl: https.url })).status).toBe(401);
    } finally {
      await https.close();
    }
  });

  it('is named in the OpenAPI document as the deployment sets it: __Host-ap_session on https, and says both', async () => {
    const https = await startInProcessApi({ PUBLIC_BASE_URL: 'https://api.platform.test' });
    try {
      const onHttps = (await http('/v1/openapi.json', { baseUrl: https.url })).body.components.securitySchemes.session;
      expect(onHttps).toMatchObject({ type: 'apiKey', in: 'cookie', name: '__Host-ap_session' });
      const onHttp = (await http('/v1/openapi.json')).body.components.securitySchemes.session;
      expect(onHttp).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'ap_session' });
      for (const scheme of [onHttps, onHttp]) {
        expect(scheme.description).toContain('`__Host-ap_session` when it is https');
        expect(scheme.description).toContain('`ap_session` otherwise');
      }
    } finally {
      await https.close();
    }
  });
});
