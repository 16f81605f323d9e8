import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { signVisitorConfirmation } from '../../lib/identity';
import { fakeRequests, http, newBot, ownerSession, startActionTarget, testDb, waitUntil } from '../support/helpers';

async function addAction(bot: BootstrapResult, session: Record<string, string>, body: Record<string, unknown>) {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}/actions`, { body, headers: session });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body;
}

describe('agent actions', () => {
  it('an action requiring approval runs only after the owner approves; the run then completes', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await addAction(bot, session, {
        name: 'send_invoice',
        description: 'Sends an invoice',
        url: target.url,
        requires_approval: true,
      });
      const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
        body: { kind: 'manual', task: 'Invoice the customer [[fake:tool-call:send_invoice:{"amount":5}]]' },
        headers: session,
      });
      const started = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${trigger.body.id}/run`, {
        body: {},
        headers: session,
      });
      expect(started.status).toBe(202);
      const runId = started.body.run_id;

      const [approval] = await waitUntil('a pending approval', async () => {
        const a = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals`, { headers: session });
        return a.body.approvals?.length ? a.body.approvals : undefined;
      });
      expect(approval).toMatchObject({
        run_id: runId,
        action: 'send_invoice',
        arguments: { amount: 5 },
        status: 'pending',
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(target.calls).toHaveLength(0);
      const run = await testDb().query(`SELECT status FROM runs WHERE id = $1`, [runId]);
      expect(run.rows[0].status).toBe('running');
      const notes = await http('/v1/dashboard/notifications', { headers: session });
      expect(notes.body.notifications.map((n: { kind: string }) => n.kind)).toContain('approval_requested');

      // A builder key can never approve: the approval endpoints take a signed-in user only.
      const byBuilder = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/approve`, {
        method: 'POST',
        key: bot.keys.builder_key,
      });
      expect(byBuilder.status).toBe(401);
      expect(target.calls).toHaveLength(0);

      const approved = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/approve`, {
        method: 'POST',
        headers: session,
      });
      expect(approved.body).toEqual({ id: approval.id, status: 'approved' });
      const done = await waitUntil('the run to finish', async () => {
        const r = await testDb().query(`SELECT status, answer FROM runs WHERE id = $1`, [runId]);
        return r.rows[0].status === 'done' ? r.rows[0] : undefined;
      });
      expect(target.calls).toHaveLength(1);
      expect(JSON.parse(target.calls[0].body)).toEqual({ amount: 5 });
      expect(done.answer).toContain('Tool send_invoice returned: HTTP 200');
    } finally {
      await target.close();
    }
  }, 40_000);

  it('a rejected action is not carried out and the run still finishes', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await addAction(bot, session, {
        name: 'delete_all',
        description: 'Deletes everything',
        url: target.url,
        requires_approval: true,
      });
      const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
        body: { kind: 'manual', task: 'Clean up [[fake:tool-call:delete_all:{}]]' },
        headers: session,
      });
      const { body } = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${trigger.body.id}/run`, {
        body: {},
        headers: session,
      });
      const [approval] = await waitUntil(
        'a pending approval',
        async () =>
          (await http(`/v1/dashboard/bots/${bot.bot_id}/approvals`, { headers: session })).body.approvals?.length &&
          (await http(`/v1/dashboard/bots/${bot.bot_id}/approvals`, { headers: session })).body.approvals,
      );
      await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/reject`, {
        method: 'POST',
        headers: session,
      });
      const done = await waitUntil('the run', async () => {
        const r = await testDb().query(`SELECT status, answer FROM runs WHERE id = $1`, [body.run_id]);
        return r.rows[0].status === 'done' ? r.rows[0] : undefined;
      });
      expect(done.answer).toContain('rejected');
      expect(target.calls).toHaveLength(0);
      const again = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/approve`, {
        method: 'POST',
        headers: session,
      });
      expect(again.status).toBe(409);
    } finally {
      await target.close();
    }
  }, 40_000);

  it('an admin-only action is unavailable to an ordinary visitor and available to a confirmed admin', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await addAction(bot, session, {
        name: 'refund_order',
        description: 'Refunds an order',
        url: target.url,
        admin_only: true,
      });
      const tag = randomUUID();
      const message = `Refund order 7 [[fake:tag:${tag}]] [[fake:tool-call:refund_order:{"order":7}]]`;

      const ordinary = await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { message, user_token: 'visitor-1' },
      });
      expect(ordinary.status).toBe(200);
      const asOrdinary = await fakeRequests(tag);
      expect(asOrdinary).toHaveLength(1);
      // Only the tool every chat turn has (saying it cannot answer), not the admin's action.
      const names = (req: { body: Record<string, any> }) =>
        (req.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
      expect(names(asOrdinary[0])).toEqual(['cannot_answer']);
      expect(target.calls).toHaveLength(0);

      const adminAuth = signVisitorConfirmation(
        { user: 'boss', role: 'admin', bot: bot.bot_id, exp: Math.floor(Date.now() / 1000) + 600 },
        bot.keys.visitor_identity_secret,
      );
      const admin = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message, user_auth: adminAuth } });
      expect(admin.status).toBe(200);
      expect(admin.body.answer).toContain('Tool refund_order returned: HTTP 200');
      const asAdmin = (await fakeRequests(tag)).slice(1);
      expect(names(asAdmin[0])).toEqual(['refund_order', 'cannot_answer']);
      expect(target.calls).toHaveLength(1);
    } finally {
      await target.close();
    }
  }, 40_000);

  it("the dashboard's test chat confirms the signed-in user as the bot's admin (identity rule 6)", async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await addAction(bot, session, {
        name: 'admin_report',
        description: 'Builds the admin report',
        url: target.url,
        admin_only: true,
      });
      const sid = randomUUID();
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/test-chat`, {
        body: { session_id: sid, message: 'Report please [[fake:tool-call:admin_report:{}]]' },
        headers: session,
      });
      expect(res.status).toBe(200);
      expect(res.body.answer).toContain('Tool admin_report returned: HTTP 200');
      expect(target.calls).toHaveLength(1);
      const conv = await testDb().query(`SELECT visitor_user FROM conversations WHERE session_id = $1`, [sid]);
      expect(conv.rows[0].visitor_user).toMatch(/^dashboard:usr_/);
      // Not without a session, and not for another workspace's bot.
      expect((await http(`/v1/dashboard/bots/${bot.bot_id}/test-chat`, { body: { message: 'x' } })).status).toBe(401);
      const stranger = await ownerSession(await newBot());
      expect(
        (await http(`/v1/dashboard/bots/${bot.bot_id}/test-chat`, { body: { message: 'x' }, headers: stranger }))
          .status,
      ).toBe(404);
    } finally {
      await target.close();
    }
  }, 40_000);

  it('in a chat turn an action needing approval is requested, and carried out in the conversation once approved', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await addAction(bot, session, {
        name: 'book_table',
        description: 'Books a table',
        url: target.url,
        requires_approval: true,
      });
      const sid = randomUUID();
      const res = await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { session_id: sid, message: 'Book a table [[fake:tool-call:book_table:{"people":2}]]' },
      });
      expect(res.status).toBe(200);
      expect(res.body.answer).toContain('must approve');
      const [approval] = await waitUntil('approval', async () => {
        const a = (await http(`/v1/dashboard/bots/${bot.bot_id}/approvals`, { headers: session })).body.approvals;
        return a?.length ? a : undefined;
      });
      expect(target.calls).toHaveLength(0);
      await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/approve`, {
        method: 'POST',
        headers: session,
      });
      const last = await waitUntil('the follow-up message', async () => {
        const poll = await http(`/v1/api/messages?session_id=${sid}`, { key: bot.keys.secret_key });
        const m = poll.body.messages.at(-1);
        return m?.text.startsWith('Done:') ? m : undefined;
      });
      expect(last.author).toBe('bot');
      expect(target.calls).toHaveLength(1);
    } finally {
      await target.close();
    }
  }, 40_000);
});
