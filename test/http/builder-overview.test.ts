import { describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import http_ from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BootstrapResult } from '../../lib/accounts/service';
import { type Incident, createBuilderOverview } from '../../lib/builder/overview';
import { createBot } from '../../lib/bots/service';
import { grantCredits } from '../../lib/credits/service';
import type { Queryable } from '../../lib/db';
import { recordScanAccepted } from '../../lib/scans/runs';
import { createSecretBox } from '../../lib/secret-box';
import { pauseTriggerForFailures } from '../../lib/triggers/store';
import { http, newBot, ownerSession, startActionTarget, testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { startWebhookReceiver } from '../support/webhook-receiver';

/** The overview on the test stack's database, counting the statements it sends. */
function overview() {
  const counter = { queries: 0 };
  const db: Queryable = {
    query: ((...args: unknown[]) => {
      counter.queries++;
      return (testDb().query as (...a: unknown[]) => unknown)(...args);
    }) as Queryable['query'],
  };
  return { ...createBuilderOverview({ db }), counter };
}

const incidentsOf = (bot: BootstrapResult) => overview().incidents(bot.workspace_id, bot.bot_id);
const kinds = (list: Incident[]) => list.map((i) => i.kind);

async function addKnowledge(bot: BootstrapResult, text = 'FACT: the shop opens at nine.'): Promise<string> {
  const res = await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { text } });
  expect(res.status).toBe(202);
  return res.body.source_id;
}

async function createTrigger(bot: BootstrapResult, session: Record<string, string>, body: Record<string, unknown>) {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, { body, headers: session });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body;
}

const setModel = (bot: BootstrapResult, model: string | null) =>
  testDb().query(`UPDATE bots SET model = $2 WHERE id = $1`, [bot.bot_id, model]);

const chat = (bot: BootstrapResult, message: string, extra: Record<string, unknown> = {}) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: randomUUID(), message, ...extra } });

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const hook = (t: { id: string; secret: string }, body: string) =>
  http(`/v1/hooks/${t.id}`, {
    method: 'POST',
    rawBody: body,
    headers: { 'Content-Type': 'text/plain', 'X-Hook-Signature': sign(t.secret, body) },
  });

async function msOf(sql: string, values: unknown[]): Promise<number> {
  const res = await testDb().query<{ at: Date }>(sql, values);
  return res.rows[0].at.getTime();
}

describe('builder tool agents', () => {
  it('lists the workspace agents by name with knowledge and channel counts, marking the key bot, never another workspace', async () => {
    const owner = await newBot({ botName: 'Beta desk' });
    const box = createSecretBox(stackInfo().secretEncryptionKey);
    const alpha = await createBot(testDb(), box, { workspaceId: owner.workspace_id, name: 'alpha shop' });
    const gamma = await createBot(testDb(), box, { workspaceId: owner.workspace_id, name: 'Gamma' });
    const session = await ownerSession(owner);
    await addKnowledge(owner, 'FACT: one');
    await addKnowledge(owner, 'FACT: two');
    await createTrigger(owner, session, { kind: 'manual', task: 'Daily check' });
    await createTrigger(owner, session, { kind: 'webhook', task: 'On order' });
    const removed = await createTrigger(owner, session, { kind: 'manual', task: 'Gone' });
    const del = await http(`/v1/dashboard/bots/${owner.bot_id}/triggers/${removed.id}`, {
      method: 'DELETE',
      headers: session,
    });
    expect(del.status).toBe(200);
    const stranger = await newBot({ botName: 'Aardvark' });
    await addKnowledge(stranger);

    const o = overview();
    const list = await o.agents(owner.workspace_id, owner.bot_id);
    // Case does not decide the order (Postgres' C collation would put "Beta" and "Gamma" before "alpha").
    expect(list).toEqual([
      {
        id: alpha.botId,
        name: 'alpha shop',
        knowledge_sources: 0,
        channels: { chat: true, triggers: 0, total: 1 },
        issued_for_this_key: false,
      },
      {
        id: owner.bot_id,
        name: 'Beta desk',
        knowledge_sources: 2,
        channels: { chat: true, triggers: 2, total: 3 },
        issued_for_this_key: true,
      },
      {
        id: gamma.botId,
        name: 'Gamma',
        knowledge_sources: 0,
        channels: { chat: true, triggers: 0, total: 1 },
        issued_for_this_key: false,
      },
    ]);
    expect(o.counter.queries).toBe(1);

    // A workspace key (issued through pairing) marks no agent; a bot id of another workspace marks none either.
    const unmarked = await overview().agents(owner.workspace_id, null);
    expect(unmarked.map((a) => a.issued_for_this_key)).toEqual([false, false, false]);
    const foreignMark = await overview().agents(owner.workspace_id, stranger.bot_id);
    expect(foreignMark.map((a) => a.id)).toEqual([alpha.botId, owner.bot_id, gamma.botId]);
    expect(foreignMark.some((a) => a.issued_for_this_key)).toBe(false);

    const theirs = await overview().agents(stranger.workspace_id, stranger.bot_id);
    expect(theirs).toEqual([
      {
        id: stranger.bot_id,
        name: 'Aardvark',
        knowledge_sources: 1,
        channels: { chat: true, triggers: 0, total: 1 },
        issued_for_this_key: true,
      },
    ]);
  });

  it('agents with the same name ignoring case come in a fixed order', async () => {
    const owner = await newBot({ botName: 'Support' });
    const box = createSecretBox(stackInfo().secretEncryptionKey);
    const lower = await createBot(testDb(), box, { workspaceId: owner.workspace_id, name: 'support' });
    const twin = await createBot(testDb(), box, { workspaceId: owner.workspace_id, name: 'Support' });
    const ids = (await overview().agents(owner.workspace_id, null)).map((a) => a.id);
    expect(ids).toEqual([...[owner.bot_id, twin.botId].sort(), lower.botId]);
  });
});

describe('builder tool incidents', () => {
  it('a healthy agent has none; an empty knowledge base is one, gone once knowledge is added, back when it is deleted', async () => {
    const bot = await newBot();
    const created = await msOf(`SELECT created_at AS at FROM bots WHERE id = $1`, [bot.bot_id]);
    expect(await incidentsOf(bot)).toEqual([
      {
        kind: 'knowledge_empty',
        severity: 'warning',
        problem: expect.stringContaining('knowledge base of My agent is empty'),
        fix: expect.stringContaining('Send me the text'),
        builder_can_fix: true,
        since: created,
        details: { knowledge_sources: 0, scans_running: 0 },
      },
    ]);

    const sourceId = await addKnowledge(bot);
    expect(await incidentsOf(bot)).toEqual([]);

    const del = await http(`/v1/api/knowledge/${sourceId}`, { method: 'DELETE', key: bot.keys.secret_key });
    expect(del.status).toBe(200);
    // Emptied after it had knowledge: when that happened is not recorded.
    expect(await incidentsOf(bot)).toEqual([
      expect.objectContaining({
        kind: 'knowledge_empty',
        since: null,
        details: { knowledge_sources: 0, scans_running: 0 },
      }),
    ]);
  });

  it('an unknown agent or one of another workspace is not_found, like the services answer', async () => {
    const mine = await newBot();
    const theirs = await newBot();
    for (const [ws, id] of [
      [mine.workspace_id, 'bot_doesnotexist'],
      [mine.workspace_id, theirs.bot_id],
      [theirs.workspace_id, mine.bot_id],
    ]) {
      await expect(overview().incidents(ws, id)).rejects.toMatchObject({
        code: 'not_found',
        status: 404,
        message: 'No such bot in your workspace',
      });
    }
    expect(kinds(await overview().incidents(mine.workspace_id, mine.bot_id))).toEqual(['knowledge_empty']);
  });

  it('out of credits: blocking, counts the refused runs, not mistaken for an AI failure; gone after a top-up', async () => {
    const bot = await newBot({ initialCredits: 0 });
    const wsCreated = await msOf(`SELECT created_at AS at FROM workspaces WHERE id = $1`, [bot.workspace_id]);
    // Blocking before warning.
    const before = await incidentsOf(bot);
    expect(kinds(before)).toEqual(['out_of_credits', 'knowledge_empty']);
    expect(before[0]).toEqual({
      kind: 'out_of_credits',
      severity: 'blocking',
      problem: expect.stringContaining('run out of credits'),
      fix: expect.stringContaining('Add credits'),
      builder_can_fix: false,
      since: wsCreated,
      details: { balance: 0, refused_runs: 0 },
    });

    const refused = await chat(bot, 'hello?');
    expect([refused.status, refused.body.code]).toEqual([503, 'llm_unavailable']);
    const after = await incidentsOf(bot);
    expect(kinds(after)).toEqual(['out_of_credits', 'knowledge_empty']);
    expect(after[0].details).toEqual({ balance: 0, refused_runs: 1 });
    expect(after[0].problem).toContain('1 run(s) of this agent were refused');

    await grantCredits(testDb(), bot.workspace_id, 50, 'top-up');
    expect(kinds(await incidentsOf(bot))).toEqual(['knowledge_empty']);
  });

  it('the AI service refusing the key, then not knowing the model; gone after an answered turn', async () => {
    const bot = await newBot();
    await addKnowledge(bot);
    await setModel(bot, 'fake-fail-401');
    const first = await chat(bot, 'first question');
    expect([first.status, first.body.code]).toEqual([503, 'llm_unavailable']);
    const [keyIncident, ...rest] = await incidentsOf(bot);
    expect(rest).toEqual([]);
    const run1 = await testDb().query(`SELECT id, started_at FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(keyIncident).toEqual({
      kind: 'llm_unavailable',
      severity: 'blocking',
      problem: expect.stringContaining("refused the platform's key or its account has no funds left"),
      fix: expect.stringContaining('renew its AI key'),
      builder_can_fix: false,
      since: run1.rows[0].started_at.getTime(),
      details: {
        reason: 'key_or_funds',
        model: 'fake-fail-401',
        failed_runs: 1,
        last_run_id: run1.rows[0].id,
        last_error: expect.stringContaining('refused the key'),
      },
    });

    await setModel(bot, 'fake-fail-404');
    const second = await chat(bot, 'second question');
    expect([second.status, second.body.code]).toEqual([503, 'llm_unavailable']);
    const [modelIncident] = await incidentsOf(bot);
    expect(modelIncident).toMatchObject({
      kind: 'llm_unavailable',
      builder_can_fix: true,
      since: run1.rows[0].started_at.getTime(),
      details: { reason: 'model_not_found', model: 'fake-fail-404', failed_runs: 2 },
    });
    expect(modelIncident.problem).toContain('does not know the model "fake-fail-404"');
    expect(modelIncident.fix).toContain('Ask me to switch the agent');

    await setModel(bot, null);
    const ok = await chat(bot, 'third question');
    expect(ok.status).toBe(200);
    expect(await incidentsOf(bot)).toEqual([]);
  });

  it('a trigger failing, then paused after five failed runs; gone once turned on again', async () => {
    const bot = await newBot();
    await addKnowledge(bot);
    const session = await ownerSession(bot);
    await setModel(bot, 'fake-fail-500');
    const t = await createTrigger(bot, session, { kind: 'webhook', name: 'Orders', task: 'New order', mode: 'wait' });
    const runIds: string[] = [];
    const fail = async (i: number) => {
      const res = await hook(t, `order ${i}`);
      expect([res.status, res.body.code]).toEqual([502, 'run_failed']);
      runIds.push(res.body.run_id);
    };
    const failuresOf = async () =>
      (await testDb().query(`SELECT consecutive_failures FROM triggers WHERE id = $1`, [t.id])).rows[0]
        .consecutive_failures;

    await fail(0);
    await fail(1);
    await waitUntil('two failures counted', async () => (await failuresOf()) === 2);
    const firstStarted = await msOf(`SELECT started_at AS at FROM runs WHERE id = $1`, [runIds[0]]);
    expect(await incidentsOf(bot)).toEqual([
      {
        kind: 'trigger_failing',
        severity: 'warning',
        problem: expect.stringContaining('The last 2 run(s) of the webhook trigger "Orders" failed'),
        fix: expect.any(String),
        builder_can_fix: false,
        since: firstStarted,
        details: {
          trigger_id: t.id,
          trigger_name: 'Orders',
          trigger_kind: 'webhook',
          failures: 2,
          pause_after: 5,
          last_run_id: runIds[1],
          last_error: expect.any(String),
        },
      },
    ]);

    for (let i = 2; i < 5; i++) await fail(i);
    await waitUntil(
      'the pause',
      async () =>
        (await testDb().query(`SELECT enabled FROM triggers WHERE id = $1`, [t.id])).rows[0].enabled === false,
    );
    const lastFailed = await msOf(`SELECT COALESCE(finished_at, started_at) AS at FROM runs WHERE id = $1`, [
      runIds[4],
    ]);
    const paused = await incidentsOf(bot);
    expect(paused).toEqual([
      {
        kind: 'trigger_paused',
        severity: 'blocking',
        problem: expect.stringContaining('"Orders" was paused after 5 failed runs in a row'),
        fix: expect.stringContaining('ask me to turn the trigger on again'),
        builder_can_fix: true,
        since: lastFailed,
        details: expect.objectContaining({ trigger_id: t.id, failures: 5, last_run_id: runIds[4] }),
      },
    ]);
    // The AI failing with a server error is "busy", not a key or funds problem: no llm_unavailable incident.

    const on = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}/enable`, {
      method: 'POST',
      headers: session,
    });
    expect(on.status).toBe(200);
    expect(await incidentsOf(bot)).toEqual([]);
  }, 60_000);

  it('failing webhook deliveries to the current address since the last delivered one', async () => {
    const refusing = await startWebhookReceiver([400]);
    const accepting = await startWebhookReceiver([200]);
    try {
      const bot = await newBot();
      await addKnowledge(bot);
      const setUrl = (url: string) =>
        testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, url]);
      const escalate = async () => {
        const res = await chat(bot, 'a person, please', { escalate: true });
        expect(res.body.handoff).toBe(true);
        return res.body.session_id as string;
      };
      const deliveryOf = (session: string, status: string) =>
        waitUntil(`a ${status} delivery`, async () => {
          const r = await testDb().query(
            `SELECT id, status, created_at FROM webhook_deliveries WHERE session_id = $1`,
            [session],
          );
          return r.rows[0]?.status === status ? r.rows[0] : undefined;
        });

      await setUrl(refusing.url);
      const failed = await deliveryOf(await escalate(), 'failed');
      expect(await incidentsOf(bot)).toEqual([
        {
          kind: 'webhook_failing',
          severity: 'blocking',
          problem: expect.stringContaining(`1 notification(s) to your webhook address ${refusing.url}`),
          fix: expect.stringContaining('ask me to change the webhook address'),
          builder_can_fix: true,
          since: failed.created_at.getTime(),
          details: {
            url: refusing.url,
            failed_deliveries: 1,
            last_delivery_id: failed.id,
            last_event: 'escalated',
            last_error: expect.stringContaining('400'),
          },
        },
      ]);

      // A new address: the old one's failures are not its problem.
      await setUrl(accepting.url);
      expect(await incidentsOf(bot)).toEqual([]);
      await deliveryOf(await escalate(), 'delivered');
      // Back to the refusing address: its failure is older than the last delivery that arrived.
      await setUrl(refusing.url);
      expect(await incidentsOf(bot)).toEqual([]);
      // Without an address nothing is sent, so nothing fails.
      await testDb().query(`UPDATE bots SET handoff_webhook_url = NULL WHERE id = $1`, [bot.bot_id]);
      expect(await incidentsOf(bot)).toEqual([]);
    } finally {
      await refusing.close();
      await accepting.close();
    }
  }, 40_000);

  it('a failed site scan, a scan that stopped without finishing, and one under way', async () => {
    const bot = await newBot();
    const server = http_.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const url = `http://127.0.0.1:${port}/`;

    const res = await http('/v1/admin/scrape', { key: bot.keys.secret_key, body: { url, refresh_days: 0 } });
    expect(res.status).toBe(202);
    const scan = await waitUntil('the scan to fail', async () => {
      const r = await testDb().query(`SELECT id, status, error, finished_at FROM site_scans WHERE bot_id = $1`, [
        bot.bot_id,
      ]);
      return r.rows[0]?.status === 'failed' ? r.rows[0] : undefined;
    });
    expect(await incidentsOf(bot)).toEqual([
      {
        kind: 'scan_failed',
        severity: 'warning',
        problem: expect.stringContaining(`The scan of ${url} failed`),
        fix: expect.stringContaining('ask me to scan it again'),
        builder_can_fix: true,
        since: scan.finished_at.getTime(),
        details: { scan_id: scan.id, url, error: scan.error, stopped: false },
      },
      expect.objectContaining({ kind: 'knowledge_empty', details: { knowledge_sources: 0, scans_running: 0 } }),
    ]);
    expect(scan.error).toContain(url);

    // Rows as the API writes them at 202: one left `scanning` three hours ago by a scan that stopped, one just begun.
    const stale = {
      id: randomUUID(),
      botId: bot.bot_id,
      url: 'https://stale.example/',
      trigger: 'api' as const,
      maxPages: 1,
    };
    await recordScanAccepted(testDb(), stale);
    await testDb().query(
      `UPDATE site_scans SET started_at = now() - interval '3 hours', updated_at = now() - interval '3 hours' WHERE id = $1`,
      [stale.id],
    );
    await recordScanAccepted(testDb(), { ...stale, id: randomUUID(), url: 'https://fresh.example/' });
    const list = await incidentsOf(bot);
    // Scans in the order they started: the stopped one began three hours ago.
    expect(kinds(list)).toEqual(['scan_failed', 'scan_failed', 'knowledge_empty']);
    expect(list[0]).toMatchObject({
      details: { scan_id: stale.id, url: stale.url, error: 'The scan stopped without finishing', stopped: true },
    });
    expect(list[1]).toMatchObject({ details: { scan_id: scan.id, stopped: false } });
    expect(list[2]).toMatchObject({ details: { knowledge_sources: 0, scans_running: 1 } });
    expect(list[2].problem).toContain('A site scan is under way');
  }, 40_000);

  it('an action waiting for approval; an expired chat approval is not; gone once approved', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      await addKnowledge(bot);
      const session = await ownerSession(bot);
      const action = await http(`/v1/dashboard/bots/${bot.bot_id}/actions`, {
        headers: session,
        body: { name: 'send_invoice', description: 'Sends an invoice', url: target.url, requires_approval: true },
      });
      expect(action.status).toBe(201);
      const trigger = await createTrigger(bot, session, {
        kind: 'manual',
        task: 'Invoice the customer [[fake:tool-call:send_invoice:{"amount":5}]]',
      });
      const started = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${trigger.id}/run`, {
        body: {},
        headers: session,
      });
      expect(started.status).toBe(202);
      const approval = await waitUntil('a pending approval', async () => {
        const r = await testDb().query(`SELECT id, created_at FROM action_approvals WHERE bot_id = $1`, [bot.bot_id]);
        return r.rows[0];
      });
      // A chat turn's approval from eight days ago has expired (its workflow told the visitor so).
      await testDb().query(
        `INSERT INTO action_approvals (id, run_id, bot_id, action_id, arguments, workflow_id, created_at)
         VALUES ($1, $2, $3, $4, '{}', $5, now() - interval '8 days')`,
        ['apr_expired', 'run_old', bot.bot_id, action.body.id, 'approval/apr_expired'],
      );

      expect(await incidentsOf(bot)).toEqual([
        {
          kind: 'approval_waiting',
          severity: 'warning',
          problem: expect.stringContaining('1 action call(s) of My agent wait for your approval ("send_invoice")'),
          fix: expect.stringContaining('Approve or reject them in the dashboard'),
          builder_can_fix: false,
          since: approval.created_at.getTime(),
          details: { approvals: 1, approval_ids: [approval.id], actions: ['send_invoice'] },
        },
      ]);

      const approved = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approval.id}/approve`, {
        method: 'POST',
        headers: session,
      });
      expect(approved.status).toBe(200);
      await waitUntil('the run to finish', async () => {
        const r = await testDb().query(`SELECT status FROM runs WHERE id = $1`, [started.body.run_id]);
        return r.rows[0].status === 'done';
      });
      expect(await incidentsOf(bot)).toEqual([]);
    } finally {
      await target.close();
    }
  }, 40_000);

  it('a fixed number of statements however many incidents: no query per trigger, scan or run', async () => {
    const bot = await newBot({ initialCredits: 0 });
    const session = await ownerSession(bot);
    const triggers = [];
    for (const name of ['A', 'B', 'C'])
      triggers.push(await createTrigger(bot, session, { kind: 'manual', name, task: name }));
    for (const t of triggers) {
      await testDb().query(`UPDATE triggers SET consecutive_failures = 5 WHERE id = $1`, [t.id]);
      expect(await pauseTriggerForFailures(testDb(), t.id)).not.toBeNull();
    }
    for (const host of ['a', 'b']) {
      const id = randomUUID();
      await recordScanAccepted(testDb(), {
        id,
        botId: bot.bot_id,
        url: `https://${host}.example/`,
        trigger: 'api',
        maxPages: 1,
      });
      await testDb().query(
        `UPDATE site_scans SET status = 'failed', error = 'unreachable', finished_at = now() WHERE id = $1`,
        [id],
      );
    }
    const o = overview();
    const list = await o.incidents(bot.workspace_id, bot.bot_id);
    expect(kinds(list)).toEqual([
      'out_of_credits',
      'trigger_paused',
      'trigger_paused',
      'trigger_paused',
      'scan_failed',
      'scan_failed',
      'knowledge_empty',
    ]);
    expect(
      list.filter((i) => i.kind === 'trigger_paused').map((i) => (i.details as { trigger_name: string }).trigger_name),
    ).toEqual(['A', 'B', 'C']);
    expect(o.counter.queries).toBe(6);
  });
});
