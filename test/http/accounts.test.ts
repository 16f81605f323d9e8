import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type FakeSmtp, parseMessage } from '../support/fake-smtp';
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
import { addMember, sessionOf } from '../support/members';
import { stackInfo } from '../support/stack-info';

/**
 * `/v1/auth/*` and the team (issue 13): sign-up, sessions, password change and reset by e-mail, invitations, and what
 * each role may do. E-mails go through the real nodemailer client to a real SMTP peer (test/support/fake-smtp.ts),
 * sent by an API of this file's own started with SMTP_URL; without SMTP the shared API writes them to its log.
 */
const unique = () => `person+${randomBytes(6).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery';

/** The token of an e-mailed link: in its fragment (`…/invite#token=…`). */
const tokenOfLink = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get('token')!;

const cookieOf = (res: { headers: Headers }) => ({ Cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] });

async function signup(body: Record<string, unknown>, baseUrl?: string, headers: Record<string, string> = {}) {
  return http('/v1/auth/signup', { body, baseUrl, headers });
}

describe('sign-up', () => {
  let own: MailingApi;
  let smtp: FakeSmtp;
  let mailing: InProcessApi;
  beforeAll(async () => {
    own = await startMailingApi({ DASHBOARD_URL: 'https://dashboard.platform.test', TRUST_PROXY: 'true' });
    ({ smtp, api: mailing } = own);
  });
  afterAll(() => own.close());

  it('creates a workspace and its owner, signed in, on the Free plan; the e-mailed confirmation brings its credits', async () => {
    const email = unique();
    const res = await signup({ email, password: PASSWORD, name: 'Ana', workspace_name: 'Acme support' }, mailing.url);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email, name: 'Ana', role: 'owner', email_verified: false },
      workspace: { id: expect.stringMatching(/^ws_/), name: 'Acme support', credits_awaiting_confirmation: 1000 },
    });
    const cookie = cookieOf(res);
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    expect((await http('/v1/auth/me', { headers: cookie })).body).toEqual(res.body);
    expect((await http('/v1/dashboard/bots', { headers: cookie })).body).toEqual({ bots: [] });
    const usage = await http('/v1/billing/usage', { headers: cookie });
    expect(usage.body.plan.id).toBe('free');
    // The included credits wait for the owner to confirm the address, by the link e-mailed to it.
    expect(usage.body.credits.balance).toBe(0);
    const mail = (await waitUntil('the confirmation e-mail', async () =>
      smtp.messages.find((m) => m.to.includes(email)),
    ))!;
    const link = /https:\/\/dashboard\.platform\.test\/verify-email#token=[A-Za-z0-9]+/.exec(
      parseMessage(mail.data).text,
    );
    expect(link).not.toBeNull();
    const confirmed = await http('/v1/auth/verify-email', { body: { token: tokenOfLink(link![0]) } });
    expect(confirmed.body).toEqual({ status: 'verified', email, credits_granted: 1000 });
    expect((await http('/v1/billing/usage', { headers: cookie })).body.credits.balance).toBe(1000);
    expect((await http('/v1/auth/me', { headers: cookie })).body.user.email_verified).toBe(true);

    // The same e-mail (in any case) cannot sign up twice; it can sign in.
    const again = await signup({ email: email.toUpperCase(), password: PASSWORD, workspace_name: 'Other' });
    expect([again.status, again.body.code]).toEqual([409, 'email_taken']);
    expect((await http('/v1/auth/login', { body: { email, password: PASSWORD } })).status).toBe(200);
  });

  it('refuses bad input with the field named, creating nothing', async () => {
    const email = unique();
    for (const [body, field] of [
      [{ email, password: 'short', workspace_name: 'W' }, 'password'],
      [{ email: 'not-an-email', password: PASSWORD, workspace_name: 'W' }, 'email'],
      [{ email, password: PASSWORD, workspace_name: '   ' }, 'workspace_name'],
      [{ email, password: PASSWORD }, 'workspace_name'],
    ] as const) {
      const res = await signup(body);
      expect([res.status, res.body.code]).toEqual([400, 'bad_request']);
      expect(res.body.error).toContain(field);
    }
    const rows = await testDb().query(`SELECT 1 FROM users WHERE email = $1`, [email]);
    expect(rows.rowCount).toBe(0);
  });

  describe('per client address', () => {
    let api: InProcessApi;
    beforeAll(async () => {
      api = await startInProcessApi({ TRUST_PROXY: 'true' });
    });
    afterAll(() => api.close());

    it('5 sign-ups a minute pass from one address, the 6th is 429; another address is not affected', async () => {
      const ip = uniqueClientAddress();
      await inOneRateWindow(10_000);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 6; i++) {
        last = await signup({ email: unique(), password: PASSWORD, workspace_name: `W${i}` }, api.url, {
          'X-Forwarded-For': ip,
        });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      expect(last!.body.code).toBe('rate_limited');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      const other = await signup({ email: unique(), password: PASSWORD, workspace_name: 'W' }, api.url, {
        'X-Forwarded-For': uniqueClientAddress(),
      });
      expect(other.status).toBe(201);
    });
  });
});

describe('sessions and passwords', () => {
  it('logout ends the session', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    expect((await http('/v1/auth/me', { headers: cookie })).status).toBe(200);
    expect((await http('/v1/auth/logout', { method: 'POST', headers: cookie })).body).toEqual({
      status: 'signed_out',
    });
    expect((await http('/v1/auth/me', { headers: cookie })).status).toBe(401);
  });

  it('a password change checks the current password and ends the other sessions', async () => {
    const bot = await newBot();
    const here = await ownerSession(bot);
    const elsewhere = await ownerSession(bot);
    const wrong = await http('/v1/auth/password', {
      body: { current_password: 'nope', new_password: 'a brand new password' },
      headers: here,
    });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'invalid_credentials']);
    const tooShort = await http('/v1/auth/password', {
      body: { current_password: bot.password, new_password: 'short' },
      headers: here,
    });
    expect(tooShort.status).toBe(400);
    // Nothing changed so far: the other session still works.
    expect((await http('/v1/auth/me', { headers: elsewhere })).status).toBe(200);

    const changed = await http('/v1/auth/password', {
      body: { current_password: bot.password, new_password: 'a brand new password' },
      headers: here,
    });
    expect(changed.body).toEqual({ status: 'changed' });
    expect((await http('/v1/auth/me', { headers: here })).status).toBe(200);
    expect((await http('/v1/auth/me', { headers: elsewhere })).status).toBe(401);
    expect((await http('/v1/auth/login', { body: { email: bot.email, password: bot.password } })).status).toBe(401);
    expect(
      (await http('/v1/auth/login', { body: { email: bot.email, password: 'a brand new password' } })).status,
    ).toBe(200);
  });

  describe('reset by e-mail (SMTP)', () => {
    let own: MailingApi;
    let smtp: FakeSmtp;
    let api: InProcessApi;
    beforeAll(async () => {
      own = await startMailingApi({ DASHBOARD_URL: 'https://dashboard.platform.test', TRUST_PROXY: 'true' });
      ({ smtp, api } = own);
    });
    afterAll(() => own.close());

    it('mails a one-time link; the new password signs in and every old session ends', async () => {
      const bot = await newBot();
      const oldSession = await ownerSession(bot);
      const asked = await http('/v1/auth/password-reset', { body: { email: bot.email }, baseUrl: api.url });
      expect([asked.status, asked.body]).toEqual([202, { status: 'sent' }]);
      const mail = (await waitUntil('the reset e-mail', async () =>
        smtp.messages.find((m) => m.to.includes(bot.email)),
      ))!;
      const parsed = parseMessage(mail.data);
      expect(parsed.subject).toBe('Reset your Agent Platform password');
      const link = /https:\/\/dashboard\.platform\.test\/reset-password#token=([A-Za-z0-9]+)/.exec(parsed.text);
      expect(link).not.toBeNull();
      const token = link![1];
      // The token is a credential: only its hash is stored.
      const stored = await testDb().query(`SELECT 1 FROM password_resets WHERE token_hash::text LIKE $1`, [
        `%${token}%`,
      ]);
      expect(stored.rowCount).toBe(0);

      const bad = await http('/v1/auth/password-reset/confirm', {
        body: { token: 'x'.repeat(40), password: PASSWORD },
      });
      expect([bad.status, bad.body.code]).toEqual([400, 'invalid_token']);
      const reset = await http('/v1/auth/password-reset/confirm', { body: { token, password: PASSWORD } });
      expect(reset.status).toBe(200);
      expect(reset.body.user.email).toBe(bot.email);
      expect((await http('/v1/auth/me', { headers: cookieOf(reset) })).status).toBe(200);
      expect((await http('/v1/auth/me', { headers: oldSession })).status).toBe(401);
      const reused = await http('/v1/auth/password-reset/confirm', { body: { token, password: 'another password!' } });
      expect([reused.status, reused.body.code]).toEqual([400, 'invalid_token']);
      expect((await http('/v1/auth/login', { body: { email: bot.email, password: PASSWORD } })).status).toBe(200);
    });

    it('answers the same for an unknown address and sends nothing; limits requests per address', async () => {
      const before = smtp.messages.length;
      const email = unique();
      const res = await http('/v1/auth/password-reset', { body: { email }, baseUrl: api.url });
      expect([res.status, res.body]).toEqual([202, { status: 'sent' }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(smtp.messages.length).toBe(before);

      // Per e-mail: 3 a minute, whoever asks (from different client addresses).
      const bot = await newBot();
      await inOneRateWindow(10_000);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await http('/v1/auth/password-reset', {
          body: { email: bot.email },
          baseUrl: api.url,
          headers: { 'X-Forwarded-For': uniqueClientAddress() },
        });
        statuses.push(r.status);
      }
      expect(statuses).toEqual([202, 202, 202, 429]);
    });
  });

  it('without SMTP the reset e-mail, link included, goes to the API log (development set-ups)', async () => {
    const bot = await newBot();
    expect((await http('/v1/auth/password-reset', { body: { email: bot.email } })).status).toBe(202);
    const logFile = path.join(stackInfo().dataDir, 'logs', 'api.log');
    const line = await waitUntil('the logged e-mail', async () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .find((l) => l.includes(bot.email) && l.includes('reset-password#token=')),
    );
    const token = /reset-password#token=([A-Za-z0-9]+)/.exec(line)![1];
    expect(JSON.parse(line).msg).toMatch(/SMTP_URL is not set/);
    expect((await http('/v1/auth/password-reset/confirm', { body: { token, password: PASSWORD } })).status).toBe(200);
  });
});

describe('invitations and roles', () => {
  it('an owner invites an operator; the link signs them in once; an operator works the inbox and nothing else', async () => {
    const bot = await newBot({ workspaceName: 'Acme' });
    const owner = await ownerSession(bot);
    const email = unique();
    const invited = await http('/v1/dashboard/team/invitations', { body: { email, role: 'operator' }, headers: owner });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({
      invitation: { email, role: 'operator', invited_by: bot.email },
      emailed: false,
      invite_url: expect.stringMatching(/\/invite#token=[A-Za-z0-9]+$/),
    });
    const token = tokenOfLink(invited.body.invite_url);
    const team = await http('/v1/dashboard/team', { headers: owner });
    expect(team.body.invitations.map((i: { email: string }) => i.email)).toEqual([email]);

    expect((await http('/v1/auth/invitation', { body: { token } })).body).toEqual({
      email,
      role: 'operator',
      workspace: { name: 'Acme' },
      invited_by: bot.email,
    });
    const accepted = await http('/v1/auth/invitation/accept', { body: { token, password: PASSWORD, name: 'Oli' } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ email, name: 'Oli', role: 'operator' });
    expect(accepted.body.workspace.id).toBe(bot.workspace_id);
    const operator = cookieOf(accepted);
    // Once only.
    expect((await http('/v1/auth/invitation', { body: { token } })).status).toBe(404);
    expect((await http('/v1/auth/invitation/accept', { body: { token, password: PASSWORD } })).status).toBe(404);

    // What an operator may do: the inbox, reading bots and notifications.
    for (const path of [
      '/v1/dashboard/inbox',
      '/v1/dashboard/bots',
      `/v1/dashboard/bots/${bot.bot_id}`,
      `/v1/dashboard/bots/${bot.bot_id}/knowledge`,
      '/v1/dashboard/notifications',
      '/v1/auth/me',
    ]) {
      expect([path, (await http(path, { headers: operator })).status]).toEqual([path, 200]);
    }
    // And not: keys, settings, agents, knowledge writes, triggers, team, billing.
    for (const [method, path, body] of [
      ['POST', `/v1/dashboard/bots/${bot.bot_id}/secret`, undefined],
      ['PATCH', `/v1/dashboard/bots/${bot.bot_id}`, { name: 'x' }],
      ['DELETE', `/v1/dashboard/bots/${bot.bot_id}`, undefined],
      ['POST', '/v1/dashboard/bots', { name: 'x' }],
      ['POST', `/v1/dashboard/bots/${bot.bot_id}/knowledge`, { text: 'x' }],
      ['GET', `/v1/dashboard/bots/${bot.bot_id}/triggers`, undefined],
      ['GET', '/v1/dashboard/team', undefined],
      ['POST', '/v1/dashboard/team/invitations', { email: unique(), role: 'operator' }],
      ['GET', '/v1/billing/usage', undefined],
      ['POST', '/v1/dashboard/assistant', { message: 'hi' }],
    ] as const) {
      const res = await http(path, { method, body, headers: operator });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'forbidden']);
    }
  });

  it('roles change and removals take effect at once; the owner cannot be removed or demoted', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const admin = await addMember(bot, 'admin');
    const operator = await addMember(bot, 'operator');
    const asAdmin = await sessionOf(admin);
    const asOperator = await sessionOf(operator);

    // An admin manages the team and keys, but changes no roles and never touches the owner.
    expect((await http('/v1/dashboard/team', { headers: asAdmin })).status).toBe(200);
    expect((await http('/v1/billing/usage', { headers: asAdmin })).status).toBe(200);
    const promote = await http(`/v1/dashboard/team/members/${operator.userId}`, {
      method: 'PATCH',
      body: { role: 'admin' },
      headers: asAdmin,
    });
    expect([promote.status, promote.body.code]).toEqual([403, 'forbidden']);
    const removeOwner = await http(`/v1/dashboard/team/members/${bot.user_id}`, {
      method: 'DELETE',
      headers: asAdmin,
    });
    expect([removeOwner.status, removeOwner.body.code]).toEqual([403, 'forbidden']);
    const demoteOwner = await http(`/v1/dashboard/team/members/${bot.user_id}`, {
      method: 'PATCH',
      body: { role: 'operator' },
      headers: owner,
    });
    expect(demoteOwner.status).toBe(403);
    const removeSelf = await http(`/v1/dashboard/team/members/${admin.userId}`, { method: 'DELETE', headers: asAdmin });
    expect(removeSelf.status).toBe(403);

    // The owner promotes the operator: the same session may now manage agents.
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, { headers: asOperator })).status).toBe(403);
    const promoted = await http(`/v1/dashboard/team/members/${operator.userId}`, {
      method: 'PATCH',
      body: { role: 'admin' },
      headers: owner,
    });
    expect(promoted.body).toMatchObject({ id: operator.userId, role: 'admin' });
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, { headers: asOperator })).status).toBe(200);

    // Admins are the owner's to remove; an admin removes operators only.
    const byAdmin = await http(`/v1/dashboard/team/members/${operator.userId}`, { method: 'DELETE', headers: asAdmin });
    expect([byAdmin.status, byAdmin.body.code]).toEqual([403, 'forbidden']);
    const third = await addMember(bot, 'operator');
    const asThird = await sessionOf(third);
    const operatorRemoved = await http(`/v1/dashboard/team/members/${third.userId}`, {
      method: 'DELETE',
      headers: asAdmin,
    });
    const nothing = { revoked_builder_keys: 0, revoked_invitations: 0, keys_seen: [], rotated_keys: [] };
    expect(operatorRemoved.body).toEqual({ status: 'removed', ...nothing });
    expect((await http('/v1/auth/me', { headers: asThird })).status).toBe(401);
    // The owner removes the promoted admin: that session stops at once.
    const removed = await http(`/v1/dashboard/team/members/${operator.userId}`, { method: 'DELETE', headers: owner });
    expect(removed.body).toEqual({ status: 'removed', ...nothing });
    expect((await http('/v1/auth/me', { headers: asOperator })).status).toBe(401);
    const members = (await http('/v1/dashboard/team', { headers: owner })).body.members;
    expect(members.map((m: { role: string; you: boolean }) => [m.role, m.you])).toEqual([
      ['owner', true],
      ['admin', false],
    ]);

    // Another workspace's member is nobody here.
    const stranger = await sessionOf(await addMember(await newBot(), 'admin'));
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: stranger })).status).toBe(404);
    expect(
      (await http(`/v1/dashboard/team/members/${admin.userId}`, { method: 'DELETE', headers: stranger })).status,
    ).toBe(404);
  });

  it('invitations: replaced, revoked, for a member, for an e-mail with an account', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const invite = (email: string, role = 'operator') =>
      http('/v1/dashboard/team/invitations', { body: { email, role }, headers: owner });
    const tokenOf = (res: { body: { invite_url: string } }) => tokenOfLink(res.body.invite_url);
    const email = unique();
    const first = await invite(email);
    const second = await invite(email, 'admin');
    expect((await http('/v1/auth/invitation', { body: { token: tokenOf(first) } })).status).toBe(404);
    expect((await http('/v1/auth/invitation', { body: { token: tokenOf(second) } })).body.role).toBe('admin');
    const revoked = await http(`/v1/dashboard/team/invitations/${second.body.invitation.id}`, {
      method: 'DELETE',
      headers: owner,
    });
    expect(revoked.body).toEqual({ status: 'revoked' });
    expect((await http('/v1/auth/invitation', { body: { token: tokenOf(second) } })).status).toBe(404);
    expect((await http('/v1/dashboard/team', { headers: owner })).body.invitations).toEqual([]);

    const member = await addMember(bot);
    const already = await invite(member.email.toUpperCase());
    expect([already.status, already.body.code]).toEqual([409, 'already_member']);
    // An account belongs to one workspace: someone with an account elsewhere cannot accept.
    const elsewhere = await newBot();
    const taken = await http('/v1/auth/invitation/accept', {
      body: { token: tokenOf(await invite(elsewhere.email)), password: PASSWORD },
    });
    expect([taken.status, taken.body.code]).toEqual([409, 'email_taken']);
    const bad = await invite('not an email');
    expect(bad.status).toBe(400);
    const ownerRole = await invite(unique(), 'owner');
    expect(ownerRole.status).toBe(400);
  });
});
