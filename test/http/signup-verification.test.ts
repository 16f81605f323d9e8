import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createBillingService } from '../../lib/billing/service';
import { createCreditService } from '../../lib/credits/service';
import { createDb } from '../../lib/db';
import { MIGRATIONS_DIR } from '../../lib/migrate';
import { type FakeSmtp, parseMessage, startFakeSmtp } from '../support/fake-smtp';
import {
  agentctl,
  http,
  newBot,
  ownerSession,
  rawRequest,
  testDb,
  uniqueClientAddress,
  waitUntil,
} from '../support/helpers';
import { type InProcessApi, type MailingApi, startInProcessApi, startMailingApi } from '../support/in-process-api';
import { stackInfo } from '../support/stack-info';

/**
 * Sign-up is verified before credits (issue 17.8, docs/decisions/111-signup-verification.md): a workspace
 * made by sign-up has no credits — its agents are refused as an empty balance is — until its owner follows the link
 * e-mailed to them, which grants the month's included credits once; a newer link voids the older, resends are limited,
 * an accepted invitation or a confirmed reset proves the mailbox too, and the monthly grant waits for the confirmation.
 * E-mails go through the real nodemailer client to a real SMTP peer (test/support/fake-smtp.ts) from an API of this
 * file's own with a configured dashboard address.
 */
const DASHBOARD = 'https://dashboard.platform.test';
const PASSWORD = 'correct horse battery';
const unique = () => `owner+${randomBytes(6).toString('hex')}@example.com`;
/** Each sign-up from an address of its own (198.18.0.0/15, set aside for tests): 5 a minute per address are allowed. */
const cookieOf = (res: { headers: Headers }) => ({ Cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] });
const LINK = /https:\/\/dashboard\.platform\.test\/verify-email#token=([A-Za-z0-9]{40})\b/;

let own: MailingApi | undefined;
let smtp: FakeSmtp;
let api: InProcessApi;
beforeAll(async () => {
  own = await startMailingApi({ DASHBOARD_URL: DASHBOARD, TRUST_PROXY: 'true' });
  ({ smtp, api } = own);
});
afterAll(() => own?.close());

async function signup(input: { email?: string; name?: string; workspace_name?: string } = {}) {
  const email = input.email ?? unique();
  const res = await http('/v1/auth/signup', {
    body: { email, password: PASSWORD, workspace_name: input.workspace_name ?? 'Acme', name: input.name },
    baseUrl: api.url,
    headers: { 'X-Forwarded-For': uniqueClientAddress() },
  });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
  return { email, cookie: cookieOf(res), view: res.body, workspaceId: res.body.workspace.id as string };
}

/** The confirmation e-mails received for `email`, oldest first, once there are `count`. */
async function mailsTo(email: string, count = 1) {
  return waitUntil(`${count} e-mail(s) to ${email}`, async () => {
    const mails = smtp.messages.filter((m) => m.to.includes(email));
    return mails.length >= count ? mails.map((m) => parseMessage(m.data)) : undefined;
  });
}

const tokenIn = (text: string) => LINK.exec(text)?.[1];
const verify = (token: string) =>
  http('/v1/auth/verify-email', {
    body: { token },
    baseUrl: api.url,
    headers: { 'X-Forwarded-For': uniqueClientAddress() },
  });
const resend = (cookie: Record<string, string>) =>
  http('/v1/auth/verify-email/resend', { method: 'POST', baseUrl: api.url, headers: cookie });

/** The workspace's balance as the platform reads it (its column and its shards). */
function balanceOf(workspaceId: string): Promise<number> {
  return createCreditService({ db: testDb() }).balance(workspaceId);
}
async function grantsOf(workspaceId: string) {
  const res = await testDb().query(`SELECT amount, reason FROM credit_ledger WHERE workspace_id = $1 AND amount > 0`, [
    workspaceId,
  ]);
  return res.rows;
}

describe('a sign-up', () => {
  it('has no credits until its owner follows the e-mailed link; the link grants the included credits once', async () => {
    const { email, cookie, view, workspaceId } = await signup({ name: 'Ana', workspace_name: 'Acme support' });
    expect(view).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email, name: 'Ana', role: 'owner', email_verified: false },
      workspace: { id: workspaceId, name: 'Acme support', credits_awaiting_confirmation: 1000 },
    });
    expect((await http('/v1/auth/me', { headers: cookie, baseUrl: api.url })).body).toEqual(view);
    const usage = await http('/v1/billing/usage', { headers: cookie, baseUrl: api.url });
    expect(usage.body.credits.balance).toBe(0);
    expect(await grantsOf(workspaceId)).toEqual([]);

    // The e-mail: a fixed subject, a link on the configured dashboard address with the token in its fragment, and
    // none of the words the person chose (the workspace's and their name).
    const [mail] = await mailsTo(email);
    expect(mail.subject).toBe('Confirm your e-mail address for Agent Platform');
    expect(mail.text).toContain("Confirm it to receive your workspace's 1,000 included credits");
    const token = tokenIn(mail.text)!;
    expect(token).toBeDefined();
    expect(mail.text).not.toContain('Acme support');
    expect(mail.text).not.toContain('Ana');
    // The token is a credential: only its hash is stored; it works for 48 hours.
    const stored = await testDb().query(
      `SELECT token_hash::text LIKE $2 AS plain, extract(epoch FROM expires_at - created_at)::int AS seconds
         FROM email_verifications WHERE user_id = $1`,
      [view.user.id, `%${token}%`],
    );
    expect(stored.rows).toEqual([{ plain: false, seconds: 48 * 3600 }]);

    // No agent (and so no key) before the address is confirmed (docs/decisions/142-keys-outlive-holders.md).
    const early = await http('/v1/dashboard/bots', { body: { name: 'Helper' }, headers: cookie, baseUrl: api.url });
    expect([early.status, early.body.code]).toEqual([403, 'forbidden']);

    // Two confirmations at once (a double click, two tabs): both say confirmed, one grants.
    const both = await Promise.all([verify(token), verify(token)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map((r) => r.body.credits_granted).sort((a, b) => a - b)).toEqual([0, 1000]);
    expect(both[0].body).toMatchObject({ status: 'verified', email });
    const again = await verify(token);
    expect([again.status, again.body]).toEqual([200, { status: 'verified', email, credits_granted: 0 }]);
    expect(await grantsOf(workspaceId)).toEqual([{ amount: 1000, reason: 'Free plan: included credits' }]);
    expect(await balanceOf(workspaceId)).toBe(1000);
    const me = await http('/v1/auth/me', { headers: cookie, baseUrl: api.url });
    expect(me.body.user.email_verified).toBe(true);
    expect(me.body.workspace.credits_awaiting_confirmation).toBe(0);

    const created = await http('/v1/dashboard/bots', { body: { name: 'Helper' }, headers: cookie, baseUrl: api.url });
    expect(created.status).toBe(201);
    const key = created.body.keys.secret_key as string;
    const answered = await http('/v1/api/chat', { key, body: { message: 'hello again' } });
    expect(answered.status).toBe(200);
    expect(answered.body.answer).toContain('Fake answer: hello again');
    // Nothing left to send.
    const late = await resend(cookie);
    expect([late.status, late.body.code]).toEqual([409, 'conflict']);
  });

  it('mails the link to the configured address whatever Host the sign-up came with, and answers before the mail server', async () => {
    const mailServerDelayMs = 3000;
    const slow = await startFakeSmtp({ greetingDelayMs: mailServerDelayMs });
    const slowApi = await startInProcessApi({ SMTP_URL: slow.url, DASHBOARD_URL: DASHBOARD, TRUST_PROXY: 'true' });
    try {
      const email = unique();
      const body = JSON.stringify({ email, password: PASSWORD, workspace_name: 'W' });
      const started = Date.now();
      const res = await rawRequest(`${slowApi.url}/v1/auth/signup`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          Host: 'attacker.example',
          'X-Forwarded-Host': 'attacker.example',
          'X-Forwarded-For': uniqueClientAddress(),
        },
        body,
      });
      expect(res.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(mailServerDelayMs);
      expect(slow.messages.filter((m) => m.to.includes(email))).toHaveLength(0);
      const mail = await waitUntil('the e-mail', async () => slow.messages.find((m) => m.to.includes(email)));
      const text = parseMessage(mail!.data).text;
      expect(text).not.toContain('attacker.example');
      expect(tokenIn(text)).toBeDefined();
    } finally {
      await slowApi.close();
      await slow.close();
    }
  });

  it('refuses an unknown or expired link as reset links are refused, granting nothing', async () => {
    const { email, view, workspaceId } = await signup();
    const token = tokenIn((await mailsTo(email))[0].text)!;
    const unknown = await verify('x'.repeat(40));
    expect([unknown.status, unknown.body.code]).toEqual([400, 'invalid_token']);
    expect(unknown.body.error).toMatch(/unknown, expired or replaced/);
    const malformed = await verify('short');
    expect([malformed.status, malformed.body.code]).toEqual([400, 'bad_request']);

    await testDb().query(`UPDATE email_verifications SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
      view.user.id,
    ]);
    const expired = await verify(token);
    expect([expired.status, expired.body.code]).toEqual([400, 'invalid_token']);
    expect(await balanceOf(workspaceId)).toBe(0);
    const user = await testDb().query(`SELECT email_verified_at FROM users WHERE id = $1`, [view.user.id]);
    expect(user.rows[0].email_verified_at).toBeNull();
  });

  it('a new link voids the older ones; three new links an hour, then 429', async () => {
    const { email, cookie, workspaceId } = await signup();
    const first = tokenIn((await mailsTo(email))[0].text)!;
    const noSession = await http('/v1/auth/verify-email/resend', { method: 'POST', baseUrl: api.url });
    expect(noSession.status).toBe(401);

    const sent = await resend(cookie);
    expect([sent.status, sent.body]).toEqual([202, { status: 'sent' }]);
    const second = tokenIn((await mailsTo(email, 2))[1].text)!;
    expect(second).not.toBe(first);
    const old = await verify(first);
    expect([old.status, old.body.code]).toEqual([400, 'invalid_token']);

    expect((await resend(cookie)).status).toBe(202);
    expect((await resend(cookie)).status).toBe(202);
    const limited = await resend(cookie);
    expect([limited.status, limited.body.code]).toEqual([429, 'rate_limited']);
    const retry = Number(limited.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(3500);
    expect(retry).toBeLessThanOrEqual(3600);
    // The sign-up's link and three new ones: the refused resend sent nothing.
    const mails = await mailsTo(email, 4);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.messages.filter((m) => m.to.includes(email))).toHaveLength(4);
    const newest = tokenIn(mails[3].text)!;
    expect((await verify(second)).status).toBe(400);
    const confirmed = await verify(newest);
    expect([confirmed.status, confirmed.body.credits_granted]).toEqual([200, 1000]);
    expect(await balanceOf(workspaceId)).toBe(1000);
  });
});

describe('an owner who has not confirmed', () => {
  it('may not invite people until the address is confirmed', async () => {
    const { email, cookie, workspaceId } = await signup();
    const invite = () =>
      http('/v1/dashboard/team/invitations', {
        body: { email: unique(), role: 'operator' },
        baseUrl: api.url,
        headers: cookie,
      });
    const refused = await invite();
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);
    expect(refused.body.error).toMatch(/Confirm your e-mail address/);
    const written = await testDb().query(`SELECT count(*)::int AS n FROM invitations WHERE workspace_id = $1`, [
      workspaceId,
    ]);
    expect(written.rows[0].n).toBe(0);

    expect((await verify(tokenIn((await mailsTo(email))[0].text)!)).status).toBe(200);
    expect((await invite()).status).toBe(201);
  });
});

/** The reset e-mail's token, once it arrived. */
async function resetTokenFor(email: string) {
  const mail = await waitUntil('the reset e-mail', async () => {
    const mails = smtp.messages.filter((m) => m.to.includes(email)).map((m) => parseMessage(m.data));
    return mails.find((m) => m.subject.startsWith('Reset'));
  });
  return /reset-password#token=([A-Za-z0-9]+)/.exec(mail.text)![1];
}

describe('keys wait for the confirmation (issue 40, item 7)', () => {
  it('a sign-up gets no agent, no key and no paired client until its address is confirmed', async () => {
    const { email, cookie, workspaceId } = await signup();
    const created = await http('/v1/dashboard/bots', { body: { name: 'Helper' }, headers: cookie, baseUrl: api.url });
    expect([created.status, created.body.code]).toEqual([403, 'forbidden']);
    expect(created.body.error).toMatch(/Confirm your e-mail address/);
    // A builder client asking to connect: the owner's approval would issue a key.
    const started = await http('/v1/mcp-pair/start', { body: { device: 'Claude Desktop' } });
    const approved = await http(`/v1/dashboard/mcp-pair/${started.body.code}/approve`, {
      method: 'POST',
      headers: cookie,
      baseUrl: api.url,
    });
    expect([approved.status, approved.body.code]).toEqual([403, 'forbidden']);
    const held = await testDb().query(
      `SELECT (SELECT count(*)::int FROM bots WHERE workspace_id = $1) AS bots,
              (SELECT count(*)::int FROM api_keys WHERE workspace_id = $1) AS keys`,
      [workspaceId],
    );
    expect(held.rows).toEqual([{ bots: 0, keys: 0 }]);

    expect((await verify(tokenIn((await mailsTo(email))[0].text)!)).status).toBe(200);
    const later = await http('/v1/dashboard/bots', { body: { name: 'Helper' }, headers: cookie, baseUrl: api.url });
    expect(later.status).toBe(201);
    expect(later.body.keys.secret_key).toMatch(/^sk_/);
  });

  it("a stranger's sign-up with your address holds nothing once your password reset takes the account", async () => {
    const email = unique();
    const stranger = await signup({ email, workspace_name: 'Not yours' });
    const tried = await http('/v1/dashboard/bots', {
      body: { name: 'Mine now' },
      headers: stranger.cookie,
      baseUrl: api.url,
    });
    expect(tried.status).toBe(403);

    // The address's real owner resets the password: signed in, the address proved, the stranger signed out.
    expect((await http('/v1/auth/password-reset', { body: { email }, baseUrl: api.url })).status).toBe(202);
    const reset = await http('/v1/auth/password-reset/confirm', {
      body: { token: await resetTokenFor(email), password: 'the real owner now' },
      baseUrl: api.url,
    });
    expect(reset.status).toBe(200);
    expect(reset.body.user.email_verified).toBe(true);
    expect((await http('/v1/auth/me', { headers: stranger.cookie, baseUrl: api.url })).status).toBe(401);
    const keys = await testDb().query(`SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1`, [
      stranger.workspaceId,
    ]);
    expect(keys.rows[0].n).toBe(0);
  });

  it('an account made before sign-ups had to confirm: the reset that first proves the address stops its keys', async () => {
    // As a sign-up made before this change: an owner who never confirmed, with an agent and its keys.
    const bot = await newBot();
    await testDb().query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [bot.user_id]);
    expect((await http('/v1/api/knowledge', { key: bot.keys.secret_key })).status).toBe(200);

    expect((await http('/v1/auth/password-reset', { body: { email: bot.email }, baseUrl: api.url })).status).toBe(202);
    const reset = await http('/v1/auth/password-reset/confirm', {
      body: { token: await resetTokenFor(bot.email), password: 'the real owner now' },
      baseUrl: api.url,
    });
    expect(reset.status).toBe(200);
    const cookie = cookieOf(reset);
    const refused = await http('/v1/api/knowledge', { key: bot.keys.secret_key });
    expect([refused.status, refused.body.code]).toEqual([401, 'invalid_key']);
    const view = (await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: cookie, baseUrl: api.url })).body;
    // Its signing secrets were replaced by ones nobody was shown; its public key (in web pages) stays.
    expect(view.visitor_identity_secret_fingerprint).not.toBe(`idsec_…${bot.keys.visitor_identity_secret.slice(-4)}`);
    expect(view.handoff_webhook_secret_fingerprint).not.toBe(`whsec_…${bot.keys.handoff_webhook_secret.slice(-4)}`);
    expect([view.public_key, view.secret_key_fingerprint]).toEqual([bot.keys.public_key, null]);
    // The owner, now proved, reissues what they need.
    const issued = await http(`/v1/dashboard/bots/${bot.bot_id}/secret`, {
      method: 'POST',
      headers: cookie,
      baseUrl: api.url,
    });
    expect((await http('/v1/api/knowledge', { key: issued.body.key })).status).toBe(200);
  });
});

describe('other proofs of the mailbox', () => {
  it('accepting an invitation verifies the new member', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const email = unique();
    const invited = await http('/v1/dashboard/team/invitations', { body: { email, role: 'admin' }, headers: owner });
    expect(invited.status).toBe(201);
    const token = new URLSearchParams(new URL(invited.body.invite_url).hash.slice(1)).get('token')!;
    const accepted = await http('/v1/auth/invitation/accept', { body: { token, password: PASSWORD } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ email, role: 'admin', email_verified: true });
    expect(accepted.body.workspace.credits_awaiting_confirmation).toBe(0);
  });

  it("a confirmed password reset verifies the owner and grants the sign-up's credits, once", async () => {
    const { email, workspaceId } = await signup();
    const signupToken = tokenIn((await mailsTo(email))[0].text)!;
    const asked = await http('/v1/auth/password-reset', { body: { email }, baseUrl: api.url });
    expect(asked.status).toBe(202);
    const resetMail = await waitUntil('the reset e-mail', async () => {
      const mails = smtp.messages.filter((m) => m.to.includes(email)).map((m) => parseMessage(m.data));
      return mails.find((m) => m.subject.startsWith('Reset'));
    });
    const resetToken = /reset-password#token=([A-Za-z0-9]+)/.exec(resetMail!.text)![1];
    const reset = await http('/v1/auth/password-reset/confirm', {
      body: { token: resetToken, password: 'a brand new password' },
      baseUrl: api.url,
    });
    expect(reset.status).toBe(200);
    expect(reset.body.user.email_verified).toBe(true);
    expect(await balanceOf(workspaceId)).toBe(1000);
    // The sign-up's link still says confirmed, and grants nothing more.
    const later = await verify(signupToken);
    expect([later.status, later.body.credits_granted]).toEqual([200, 0]);
    expect(await grantsOf(workspaceId)).toEqual([{ amount: 1000, reason: 'Free plan: included credits' }]);
  });
});

describe('workspaces of the operators, and the monthly grant', () => {
  it('a bootstrapped workspace is verified; the monthly grant skips a sign-up whose owner has not confirmed', async () => {
    const bot = await newBot({ initialCredits: 0 });
    const owner = await ownerSession(bot);
    const me = await http('/v1/auth/me', { headers: owner });
    expect(me.body.user.email_verified).toBe(true);
    // As if last month's grant were the bootstrapped workspace's last one; the sign-up's month was never granted.
    await testDb().query(
      `UPDATE workspaces SET included_credits_through = (date_trunc('month', now()) - interval '1 month')::date
        WHERE id = $1`,
      [bot.workspace_id],
    );
    const { email, workspaceId } = await signup();
    const billing = createBillingService({ db: testDb() });
    await billing.grantIncludedCredits();
    expect(await balanceOf(bot.workspace_id)).toBe(1000);
    expect(await balanceOf(workspaceId)).toBe(0);

    const confirmed = await verify(tokenIn((await mailsTo(email))[0].text)!);
    expect(confirmed.body.credits_granted).toBe(1000);
    await billing.grantIncludedCredits();
    expect(await grantsOf(workspaceId)).toEqual([{ amount: 1000, reason: 'Free plan: included credits' }]);
    expect(await balanceOf(workspaceId)).toBe(1000);
  });
});

describe('the migration', () => {
  it('counts everyone before it as verified and takes no credits from anyone', async () => {
    // A database of its own: the schema as it was before this migration, with a workspace, its owner and a member.
    const name = `verify_migration_${randomBytes(4).toString('hex')}`;
    await testDb().query(`CREATE DATABASE ${name}`);
    const url = new URL(stackInfo().databaseUrl);
    url.pathname = `/${name}`;
    const db = createDb(url.toString(), { max: 1 });
    try {
      expect((await agentctl(['migrate'], { DATABASE_URL: url.toString() })).code).toBe(0);
      const [up, down] = readFileSync(path.join(MIGRATIONS_DIR, '1763803100000_email_verification.sql'), 'utf8').split(
        '-- Down Migration',
      );
      await db.query(down);
      await db.query(
        `INSERT INTO workspaces (id, name, credit_balance, included_credits_through)
         VALUES ('ws_old', 'Old', 640, (date_trunc('month', now()) - interval '1 month')::date)`,
      );
      await db.query(
        `INSERT INTO users (id, workspace_id, email, password_hash, role)
         VALUES ('usr_owner', 'ws_old', 'old-owner@example.com', 'x', 'owner'),
                ('usr_member', 'ws_old', 'old-member@example.com', 'x', 'operator')`,
      );

      await db.query(up);
      const users = await db.query(`SELECT id, email_verified_at IS NOT NULL AS verified FROM users ORDER BY id`);
      expect(users.rows).toEqual([
        { id: 'usr_member', verified: true },
        { id: 'usr_owner', verified: true },
      ]);
      expect((await db.query(`SELECT credit_balance FROM workspaces`)).rows).toEqual([{ credit_balance: 640 }]);
      // Its next month's credits still come.
      expect(await createBillingService({ db }).grantIncludedCredits()).toBe(1);
      expect((await db.query(`SELECT credit_balance FROM workspaces`)).rows).toEqual([{ credit_balance: 1640 }]);
    } finally {
      await db.end();
      await testDb().query(`DROP DATABASE ${name} WITH (FORCE)`);
    }
  });
});
