import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createBillingService } from '../../lib/billing/service';
import { QUOTA_PLACEHOLDER } from '../../lib/conversations/sessions';
import { agentctl, http, newBot, ownerSession, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { widgetCall, widgetSession } from '../support/widget';

/**
 * Billing (issue 13): plans, the month's usage against the quota, the credits ledger, top-ups recorded with agentctl
 * (no payment provider is connected), a used-up quota answered with the contract's `quota_exceeded`, lifted at once by a
 * top-up, and the included credits granted once a month.
 */
const env = () => ({ DATABASE_URL: stackInfo().databaseUrl, SECRET_ENCRYPTION_KEY: stackInfo().secretEncryptionKey });

const chat = (key: string, session: string, message = 'Hello there') =>
  http('/v1/api/chat', { key, body: { session_id: session, message } });

describe('usage and the ledger', () => {
  it('counts this month’s conversations and credits, per day too, and lists grants and charges', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    for (let i = 0; i < 2; i++) expect((await chat(bot.keys.secret_key, randomUUID())).status).toBe(200);

    const usage = await http('/v1/billing/usage?days=7', { headers: cookie });
    expect(usage.status).toBe(200);
    expect(usage.body.plan).toEqual({
      id: 'free',
      name: 'Free',
      monthly_conversations: 1000,
      monthly_credits: 1000,
      price: '$0',
    });
    expect(usage.body.conversations).toEqual({ used: 2, quota: 1000, included: 1000, topped_up: 0 });
    const charged = usage.body.credits.used_this_period;
    expect(charged).toBeGreaterThanOrEqual(2); // at least one credit a run
    expect(usage.body.credits.balance).toBe(1000 - charged);
    expect(usage.body.daily).toHaveLength(7);
    const today = usage.body.daily.at(-1);
    expect(today).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), conversations: 2, credits: charged });
    expect(usage.body.daily.slice(0, -1).every((d: { conversations: number }) => d.conversations === 0)).toBe(true);
    expect(usage.body.period.end).toBeGreaterThan(usage.body.period.start);

    const ledger = await http('/v1/billing/ledger?limit=2', { headers: cookie });
    expect(ledger.body.entries).toHaveLength(2);
    expect(ledger.body.entries.every((e: { amount: number; run_id: string }) => e.amount < 0 && e.run_id)).toBe(true);
    const rest = await http(`/v1/billing/ledger?cursor=${ledger.body.next_cursor}`, { headers: cookie });
    expect(rest.body.entries).toEqual([
      expect.objectContaining({ amount: 1000, reason: 'Free plan: included credits', run_id: null }),
    ]);
    expect(rest.body.next_cursor).toBe('');

    const plans = await http('/v1/billing/plans', { headers: cookie });
    expect(plans.body.current).toBe('free');
    expect(plans.body.plans.map((p: { id: string }) => p.id)).toEqual(['free', 'starter', 'pro', 'business']);
    expect((await http('/v1/billing/usage?days=91', { headers: cookie })).status).toBe(400);
  });
});

describe('the monthly conversation quota', () => {
  it('a used-up quota answers quota_exceeded (200) to new conversations only; a top-up lifts it at once', async () => {
    const bot = await newBot({ monthlyConversationQuota: 1 });
    const cookie = await ownerSession(bot);
    const started = randomUUID();
    expect((await chat(bot.keys.secret_key, started)).body.quota_exceeded).toBeUndefined();

    const refused = await chat(bot.keys.secret_key, randomUUID());
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ answer: QUOTA_PLACEHOLDER, quota_exceeded: true, notice: 'outage' });
    // The widget says the same; a started conversation continues.
    const visitor = await widgetSession(bot);
    const fromWidget = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: visitor.session_id, message: 'hi' },
      token: visitor.visitor_token,
    });
    expect(fromWidget.body.quota_exceeded).toBe(true);
    expect((await chat(bot.keys.secret_key, started, 'And again')).body.quota_exceeded).toBeUndefined();

    const topup = await agentctl(
      ['billing', 'topup', '--workspace', bot.workspace_id, '--conversations', '5', '--note', 'launch week', '--json'],
      env(),
    );
    expect(topup.code).toBe(0);
    expect(JSON.parse(topup.stdout).conversations).toEqual({ used: 1, quota: 6, included: 1, topped_up: 5 });
    const lifted = await chat(bot.keys.secret_key, randomUUID());
    expect(lifted.body.quota_exceeded).toBeUndefined();
    expect(lifted.body.answer).toMatch(/^Fake answer/);

    const usage = await http('/v1/billing/usage', { headers: cookie });
    expect(usage.body.conversations).toEqual({ used: 2, quota: 6, included: 1, topped_up: 5 });
    expect(usage.body.topups).toEqual([
      { kind: 'conversations', amount: 5, note: 'launch week', created_at: expect.any(Number) },
    ]);
  });

  it('is counted from the tally the maintenance keeps plus the conversations since, each counted once', async () => {
    const bot = await newBot({ monthlyConversationQuota: 3 });
    const cookie = await ownerSession(bot);
    const db = testDb();
    for (let i = 0; i < 2; i++)
      expect((await chat(bot.keys.secret_key, randomUUID())).body.quota_exceeded).toBeUndefined();
    // A tally without the minute's lag counts them at once (the schedule's waits a minute behind now).
    const billing = createBillingService({ db, tallyLagMs: 0 });
    await Promise.all([billing.tallyConversations(), billing.tallyConversations()]);
    await billing.tallyConversations();
    const tally = async () =>
      (
        await db.query(
          `SELECT counted, period = date_trunc('month', now())::date AS this_month FROM conversation_tallies WHERE workspace_id = $1`,
          [bot.workspace_id],
        )
      ).rows;
    expect(await tally()).toEqual([{ counted: 2, this_month: true }]);
    const used = async () => (await http('/v1/billing/usage', { headers: cookie })).body.conversations.used;
    expect(await used()).toBe(2);

    // The check reads the tally, not the month's rows: a tally of 3 (say, a counted conversation was erased since)
    // leaves no room, though two rows are there.
    await db.query(`UPDATE conversation_tallies SET counted = 3 WHERE workspace_id = $1`, [bot.workspace_id]);
    expect((await chat(bot.keys.secret_key, randomUUID())).body.quota_exceeded).toBe(true);
    expect(await used()).toBe(3);
    // Last month's tally is not this month's: the month's rows are counted from its start.
    await db.query(
      `UPDATE conversation_tallies SET period = (date_trunc('month', now()) - interval '1 month')::date WHERE workspace_id = $1`,
      [bot.workspace_id],
    );
    expect(await used()).toBe(2);
    // Back to the true tally: a conversation started since is counted on top of it, and fills the quota.
    await db.query(
      `UPDATE conversation_tallies SET period = date_trunc('month', now())::date WHERE workspace_id = $1`,
      [bot.workspace_id],
    );
    await db.query(`UPDATE conversation_tallies SET counted = 2 WHERE workspace_id = $1`, [bot.workspace_id]);
    expect((await chat(bot.keys.secret_key, randomUUID())).body.quota_exceeded).toBeUndefined();
    expect(await used()).toBe(3);
    expect((await chat(bot.keys.secret_key, randomUUID())).body.quota_exceeded).toBe(true);
    // The schedule's tally leaves the last minute's to the check (it is counted as one started since).
    await createBillingService({ db }).tallyConversations();
    expect(await tally()).toEqual([{ counted: 2, this_month: true }]);
    expect(await used()).toBe(3);
  });

  it('agentctl records plans and credit top-ups; its input is checked', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const plan = await agentctl(['billing', 'plan', '--workspace', bot.workspace_id, '--plan', 'pro'], env());
    expect([plan.code, plan.stdout]).toEqual([0, expect.stringContaining('Pro plan: 25000 conversations')]);
    const credits = await agentctl(['billing', 'topup', '--workspace', bot.workspace_id, '--credits', '250'], env());
    expect(credits.code).toBe(0);
    const usage = await http('/v1/billing/usage', { headers: cookie });
    expect(usage.body.plan.id).toBe('pro');
    expect(usage.body.conversations.quota).toBe(25_000);
    expect(usage.body.credits.balance).toBe(1250);
    const ledger = await http('/v1/billing/ledger', { headers: cookie });
    expect(ledger.body.entries[0]).toMatchObject({ amount: 250, reason: 'Top-up' });

    for (const args of [
      ['billing', 'plan', '--workspace', bot.workspace_id, '--plan', 'platinum'],
      ['billing', 'topup', '--workspace', bot.workspace_id, '--credits', '-5'],
      ['billing', 'topup', '--workspace', bot.workspace_id, '--credits', '5', '--conversations', '5'],
      ['billing', 'topup', '--workspace', 'ws_nothing', '--credits', '5'],
    ]) {
      const res = await agentctl(args, env());
      expect([args.join(' '), res.code]).toEqual([args.join(' '), expect.any(Number)]);
      expect(res.code).not.toBe(0);
    }
    const help = await agentctl(['--help']);
    expect(help.stdout).toContain('billing topup');
  });
});

describe('included credits', () => {
  it('are granted once per calendar month, whoever runs the grant and however often', async () => {
    const bot = await newBot({ initialCredits: 0 });
    await agentctl(['billing', 'plan', '--workspace', bot.workspace_id, '--plan', 'starter'], env());
    // As if last month's grant were the last one.
    await testDb().query(
      `UPDATE workspaces SET included_credits_through = (date_trunc('month', now()) - interval '1 month')::date WHERE id = $1`,
      [bot.workspace_id],
    );
    const billing = createBillingService({ db: testDb() });
    await Promise.all([billing.grantIncludedCredits(), billing.grantIncludedCredits()]);
    await billing.grantIncludedCredits();
    const ws = await testDb().query(`SELECT credit_balance FROM workspaces WHERE id = $1`, [bot.workspace_id]);
    expect(ws.rows[0].credit_balance).toBe(10_000);
    const grants = await testDb().query(`SELECT amount, reason FROM credit_ledger WHERE workspace_id = $1`, [
      bot.workspace_id,
    ]);
    expect(grants.rows).toEqual([{ amount: 10_000, reason: 'Starter plan: included credits' }]);
  });
});
