import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomBytes } from 'node:crypto';
import http_ from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BootstrapResult } from '../../lib/accounts/service';
import { createCreditService } from '../../lib/credits/service';
import { TRIGGER_BODY_LINE } from '../../lib/triggers/store';
import { http, newBot, ownerSession, testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

const sign = (secret: string, body: Buffer | string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function setup(model?: string) {
  const bot = await newBot();
  if (model) await testDb().query(`UPDATE bots SET model = $2 WHERE id = $1`, [bot.bot_id, model]);
  return { bot, session: await ownerSession(bot) };
}

async function createTrigger(bot: BootstrapResult, session: Record<string, string>, body: Record<string, unknown>) {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, { body, headers: session });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body;
}

const hook = (tid: string, body: Buffer | string, signature?: string) =>
  http(`/v1/hooks/${tid}`, {
    method: 'POST',
    rawBody: body,
    headers: { 'Content-Type': 'application/octet-stream', ...(signature ? { 'X-Hook-Signature': signature } : {}) },
  });

async function runsOf(botId: string) {
  return (
    await testDb().query(
      `SELECT id, status, trigger_kind, input, answer, error_code, credits FROM runs WHERE bot_id = $1 ORDER BY started_at`,
      [botId],
    )
  ).rows;
}

describe('POST /v1/hooks/{tid}', () => {
  it('wait mode: 200 {run_id, status: done, answer}; the input is task, fixed line, raw body', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'Summarise the order', mode: 'wait' });
    expect(t.secret).toMatch(/^trsec_/);
    expect(t.hook_url).toBe(`${stackInfo().apiUrl}/v1/hooks/${t.id}`);
    const body = JSON.stringify({ order: 42, items: ['tea'] });
    const res = await hook(t.id, body, sign(t.secret, body));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      run_id: expect.stringMatching(/^run_/),
      status: 'done',
      answer: expect.stringContaining('Fake answer'),
    });
    const [run] = await runsOf(bot.bot_id);
    expect(run).toMatchObject({ id: res.body.run_id, status: 'done', trigger_kind: 'webhook' });
    expect(run.input).toBe(`Summarise the order\n\n${TRIGGER_BODY_LINE}\n${body}`);
    expect(run.credits).toBeGreaterThanOrEqual(1);
  });

  it('acknowledge mode: 202 {status: accepted}, the run goes on in the background', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'Note it' });
    const res = await hook(t.id, 'ping', sign(t.secret, 'ping'));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted' });
    await waitUntil('the run to finish', async () => (await runsOf(bot.bot_id))[0]?.status === 'done');
  });

  it('401 for a missing or bad signature, 404 for an unknown or deleted trigger, 409 when disabled', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x' });
    expect((await hook(t.id, 'a')).status).toBe(401);
    expect((await hook(t.id, 'a', sign('trsec_wrong', 'a'))).body.code).toBe('invalid_signature');
    expect((await hook(t.id, 'a', sign(t.secret, 'b'))).status).toBe(401);
    expect((await hook('trg_unknown', 'a', sign(t.secret, 'a'))).status).toBe(404);
    await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}/disable`, { method: 'POST', headers: session });
    const disabled = await hook(t.id, 'a', sign(t.secret, 'a'));
    expect(disabled.status).toBe(409);
    expect(disabled.body.code).toBe('trigger_disabled');
    await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { method: 'DELETE', headers: session });
    expect((await hook(t.id, 'a', sign(t.secret, 'a'))).status).toBe(404);
  });

  it('accepts any bytes up to 256 KiB, signed exactly as sent; one byte more is 413', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x' });
    const max = randomBytes(256 * 1024);
    expect((await hook(t.id, max, sign(t.secret, max))).status).toBe(202);
    const over = randomBytes(256 * 1024 + 1);
    const res = await hook(t.id, over, sign(t.secret, over));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('a failed synchronous run is 502 with run_id; five failures in a row pause the trigger and notify; the sixth call is 409', async () => {
    const { bot, session } = await setup('fake-fail-500');
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x', mode: 'wait' });
    for (let i = 0; i < 5; i++) {
      const res = await hook(t.id, `try ${i}`, sign(t.secret, `try ${i}`));
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ code: 'run_failed', run_id: expect.stringMatching(/^run_/) });
    }
    const paused = await waitUntil('the pause', async () => {
      const v = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { headers: session });
      return v.body.enabled === false ? v.body : undefined;
    });
    expect(paused.disabled_reason).toBe('failures');
    const sixth = await hook(t.id, 'six', sign(t.secret, 'six'));
    expect(sixth.status).toBe(409);
    const notes = await http('/v1/dashboard/notifications', { headers: session });
    expect(notes.body.notifications).toEqual([
      expect.objectContaining({
        kind: 'trigger_paused',
        bot_id: bot.bot_id,
        data: expect.objectContaining({ trigger_id: t.id, failures: 5 }),
      }),
    ]);
    // Turned on by hand, it works again.
    await testDb().query(`UPDATE bots SET model = NULL WHERE id = $1`, [bot.bot_id]);
    await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}/enable`, { method: 'POST', headers: session });
    expect((await hook(t.id, 'ok', sign(t.secret, 'ok'))).status).toBe(200);
  }, 60_000);

  it('the pause holds before the fifth failure is answered: a call right after the fifth 502 is 409', async () => {
    const { bot, session } = await setup('fake-fail-500');
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x', mode: 'wait' });
    for (let i = 0; i < 5; i++) expect((await hook(t.id, `try ${i}`, sign(t.secret, `try ${i}`))).status).toBe(502);
    // No waiting: the fifth run reported its failure, and the pause was recorded, before its 502 was sent.
    const next = await hook(t.id, 'at once', sign(t.secret, 'at once'));
    expect([next.status, next.body.code]).toEqual([409, 'trigger_disabled']);
  }, 60_000);

  it('a body that is not UTF-8 text (NUL, 0xFF) becomes a run whose input carries it in base64', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'Look at this', mode: 'ack' });
    const bytes = Buffer.from([0x00, 0xff, 0x41, 0x0a]);
    const res = await hook(t.id, bytes, sign(t.secret, bytes));
    expect(res.status).toBe(202);
    const run = await waitUntil('the run', async () => {
      const r = await testDb().query(`SELECT status, input FROM runs WHERE id = $1`, [res.body.run_id]);
      return r.rows[0]?.status === 'done' ? r.rows[0] : undefined;
    });
    expect(run.input).toContain(TRIGGER_BODY_LINE);
    expect(run.input).toContain('4 bytes that are not UTF-8 text');
    expect(run.input).toContain(bytes.toString('base64'));
  }, 30_000);

  it('a success resets the failure count', async () => {
    const { bot, session } = await setup('fake-fail-500');
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x', mode: 'wait' });
    for (let i = 0; i < 4; i++) await hook(t.id, `f${i}`, sign(t.secret, `f${i}`));
    await testDb().query(`UPDATE bots SET model = NULL WHERE id = $1`, [bot.bot_id]);
    expect((await hook(t.id, 'ok', sign(t.secret, 'ok'))).status).toBe(200);
    await testDb().query(`UPDATE bots SET model = 'fake-fail-500' WHERE id = $1`, [bot.bot_id]);
    for (let i = 0; i < 4; i++) await hook(t.id, `g${i}`, sign(t.secret, `g${i}`));
    await waitUntil(
      'the count',
      async () =>
        (await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { headers: session })).body
          .consecutive_failures === 4,
    );
    const v = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { headers: session });
    expect(v.body.enabled).toBe(true);
  }, 60_000);
});

describe('credits', () => {
  it('a workspace with no credits gets failed runs with a clear reason instead of free work', async () => {
    const bot = await newBot({ initialCredits: 0 });
    const session = await ownerSession(bot);
    const t = await createTrigger(bot, session, { kind: 'webhook', task: 'x', mode: 'wait' });
    const res = await hook(t.id, 'a', sign(t.secret, 'a'));
    expect(res.status).toBe(502);
    expect(res.body.error).toContain('no credits');
    const [run] = await runsOf(bot.bot_id);
    expect(run).toMatchObject({ status: 'failed', error_code: 'no_credits', credits: 0 });
    const chat = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(chat.status).toBe(503);
    expect(chat.body.code).toBe('llm_unavailable');
  });

  it('each run is charged once in the ledger and the balance follows', async () => {
    const bot = await newBot({ initialCredits: 100 });
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'hi' } });
    const ledger = await testDb().query(
      `SELECT amount, run_id FROM credit_ledger WHERE workspace_id = $1 ORDER BY id`,
      [bot.workspace_id],
    );
    expect(ledger.rows[0]).toEqual({ amount: 100, run_id: null });
    expect(ledger.rows[1].amount).toBeLessThan(0);
    expect(await balanceOf(bot.workspace_id)).toBe(100 + ledger.rows[1].amount);
  });

  it('turns of one workspace at once are all charged, spread over its balance shards, and the balance refuses runs', async () => {
    const bot = await newBot({ initialCredits: 100 });
    const chats = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: `question ${i}` } }),
      ),
    );
    expect(chats.map((c) => c.status)).toEqual(Array(12).fill(200));
    const charged = await testDb().query<{ n: number; sum: number }>(
      `SELECT count(*)::int AS n, sum(amount)::int AS sum FROM credit_ledger WHERE workspace_id = $1 AND run_id IS NOT NULL`,
      [bot.workspace_id],
    );
    expect(charged.rows[0].n).toBe(12);
    expect(await balanceOf(bot.workspace_id)).toBe(100 + charged.rows[0].sum);
    // Not one row that every turn of the workspace waits for: the charges went to several.
    const shards = await testDb().query(
      `SELECT count(*)::int AS n FROM credit_balance_shards WHERE workspace_id = $1`,
      [bot.workspace_id],
    );
    expect(shards.rows[0].n).toBeGreaterThan(1);

    // The balance a run checks counts the shards' charges: the credits one turn spends leave none for the next.
    const poor = await newBot({ initialCredits: 1 });
    expect((await http('/v1/api/chat', { key: poor.keys.secret_key, body: { message: 'hi' } })).status).toBe(200);
    expect(await balanceOf(poor.workspace_id)).toBeLessThanOrEqual(0);
    const refused = await http('/v1/api/chat', { key: poor.keys.secret_key, body: { message: 'hi again' } });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('llm_unavailable');
  });
});

describe('schedule and poll triggers', () => {
  it('a schedule trigger produces runs on its own', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, {
      kind: 'schedule',
      task: 'Daily digest',
      schedule: { every_seconds: 1 },
    });
    const runs = await waitUntil('two scheduled runs', async () => {
      const r = (await runsOf(bot.bot_id)).filter((x) => x.status === 'done');
      return r.length >= 2 ? r : undefined;
    });
    expect(runs[0]).toMatchObject({ trigger_kind: 'schedule' });
    expect(runs[0].input).toContain('Daily digest');
    // Disabling pauses the schedule: no new runs after it settles.
    await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}/disable`, { method: 'POST', headers: session });
    await new Promise((r) => setTimeout(r, 1_500));
    const settled = (await runsOf(bot.bot_id)).length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await runsOf(bot.bot_id)).length).toBe(settled);
  }, 40_000);

  describe('poll', () => {
    let server: http_.Server;
    let content = 'version 1';
    let url = '';
    beforeAll(async () => {
      server = http_.createServer((_req, res) => res.end(content));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('runs once per change of the content', async () => {
      const { bot, session } = await setup();
      const t = await createTrigger(bot, session, {
        kind: 'poll',
        task: 'React to the change',
        poll: { url, every_seconds: 1 },
      });
      // The first fetch is the baseline: no run.
      await waitUntil(
        'the baseline',
        async () =>
          (await testDb().query(`SELECT poll_last_hash FROM triggers WHERE id = $1`, [t.id])).rows[0].poll_last_hash,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await runsOf(bot.bot_id)).toEqual([]);
      content = 'version 2';
      const [run] = await waitUntil('a run for the change', async () => {
        const r = await runsOf(bot.bot_id);
        return r.length ? r : undefined;
      });
      expect(run.input).toContain('version 2');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await runsOf(bot.bot_id)).toHaveLength(1);
      await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { method: 'DELETE', headers: session });
    }, 40_000);
  });
});

describe('manual start and the run log', () => {
  it('starts a run by hand and lists runs newest first with a Temporal UI link, paginated', async () => {
    const { bot, session } = await setup();
    const t = await createTrigger(bot, session, { kind: 'manual', task: 'Check things', mode: 'wait' });
    for (let i = 0; i < 3; i++) {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}/run`, {
        body: { body: `n${i}` },
        headers: session,
      });
      expect(res.status).toBe(200);
    }
    const page1 = await http(`/v1/dashboard/bots/${bot.bot_id}/runs?limit=2`, { headers: session });
    expect(page1.body.runs).toHaveLength(2);
    expect(page1.body.runs[0].input).toContain('n2');
    // A link to the run in the Temporal UI when one is configured (the stack's dev server, the cluster's ui-server).
    if (stackInfo().env.TEMPORAL_UI_URL)
      expect(page1.body.runs[0].workflow_url).toMatch(/\/namespaces\/default\/workflows\/run%2Frun_/);
    else expect(page1.body.runs[0].workflow_url).toBeNull();
    const page2 = await http(`/v1/dashboard/bots/${bot.bot_id}/runs?limit=2&cursor=${page1.body.next_cursor}`, {
      headers: session,
    });
    expect(page2.body.runs.map((r: { input: string }) => r.input.slice(-2))).toEqual(['n0']);
    expect(page2.body.next_cursor).toBe('');
  });

  it("another workspace's user cannot see or change the bot", async () => {
    const { bot } = await setup();
    const stranger = await newBot();
    const session = await ownerSession(stranger);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/runs`, { headers: session })).status).toBe(404);
    expect(
      (
        await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
          body: { kind: 'manual', task: 'x' },
          headers: session,
        })
      ).status,
    ).toBe(404);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/runs`)).status).toBe(401);
  });
});

describe('agent state', () => {
  it('is read and written with optimistic concurrency and a size limit', async () => {
    const { bot, session } = await setup();
    const path = `/v1/dashboard/bots/${bot.bot_id}/state`;
    expect((await http(path, { headers: session })).body).toEqual({ document: {}, version: 0 });
    const v1 = await http(path, {
      method: 'PUT',
      body: { document: { processed: ['a'] }, version: 0 },
      headers: session,
    });
    expect(v1.body).toEqual({ document: { processed: ['a'] }, version: 1 });
    const stale = await http(path, {
      method: 'PUT',
      body: { document: { processed: [] }, version: 0 },
      headers: session,
    });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('version_conflict');
    const big = await http(path, {
      method: 'PUT',
      body: { document: { blob: 'x'.repeat(70_000) }, version: 1 },
      headers: session,
    });
    expect(big.status).toBe(413);
    expect((await http(path, { headers: session })).body.version).toBe(1);
  });
});

/** The workspace's balance as the platform reads it (its column and its shards). */
function balanceOf(workspaceId: string): Promise<number> {
  return createCreditService({ db: testDb() }).balance(workspaceId);
}
