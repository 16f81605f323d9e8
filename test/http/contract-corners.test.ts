import { describe, expect, it } from '@jest/globals';
import { WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BootstrapResult } from '../../lib/accounts/service';
import { encodeCursor } from '../../lib/cursor';
import { scanScheduleId } from '../../lib/scans/service';
import { scanKey } from '../../lib/scans/sources';
import { actionApprovalWorkflow } from '../../workflows/action-approval';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { approvalWorkflowId } from '../../workflows/contracts/action-approval';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';
import { triggerScheduleId } from '../../workflows/contracts/trigger-health';
import {
  fakeRequests,
  http,
  newBot,
  ownerSession,
  sseFrames,
  startActionTarget,
  testDb,
  waitUntil,
  useTemporalClient,
} from '../support/helpers';
import { startInProcessApi } from '../support/in-process-api';
import { stackInfo } from '../support/stack-info';

/**
 * The contract's corners (issue "Keep the contract's word at its corners"): each block shows one place where the
 * contract's word is kept when the API is used the way a new integrator, or an abuser, would try it.
 */

const chat = (bot: BootstrapResult, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body, headers });

const client = useTemporalClient();

describe('visitor typing reaches the operators', () => {
  it('shows in the thread list and the transcript, and drops about 6 seconds after the last signal', async () => {
    const bot = await newBot();
    const sid = randomUUID();
    await chat(bot, { session_id: sid, message: 'hello' });
    await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: sid } });
    const thread = async () =>
      (await http('/v1/api/operator/threads', { key: bot.keys.secret_key })).body.threads.find(
        (t: { session_id: string }) => t.session_id === sid,
      );
    const transcript = async () => (await http(`/v1/api/operator/threads/${sid}`, { key: bot.keys.secret_key })).body;
    expect((await thread()).visitor_typing).toBe(false);
    expect((await transcript()).visitor_typing).toBe(false);

    expect((await http('/v1/api/typing', { key: bot.keys.secret_key, body: { session_id: sid } })).status).toBe(200);
    expect((await thread()).visitor_typing).toBe(true);
    expect((await transcript()).visitor_typing).toBe(true);
    const ahead = await testDb().query(
      `SELECT extract(epoch FROM visitor_typing_until - now()) AS s FROM conversations WHERE session_id = $1`,
      [sid],
    );
    expect(Number(ahead.rows[0].s)).toBeGreaterThan(5);
    expect(Number(ahead.rows[0].s)).toBeLessThanOrEqual(6);
    // Six seconds later (moved, not waited for): off again.
    await testDb().query(
      `UPDATE conversations SET visitor_typing_until = now() - interval '1 ms' WHERE session_id = $1`,
      [sid],
    );
    expect((await thread()).visitor_typing).toBe(false);
    expect((await transcript()).visitor_typing).toBe(false);
  });
});

describe('malformed cursors are 400, never 500', () => {
  const wrong = [
    ['not base64 JSON', '!!!'],
    ['no version', Buffer.from('{"seq":1}').toString('base64url')],
    ['a string position', encodeCursor({ seq: 'abc' })],
    ['a negative position', encodeCursor({ seq: -5 })],
    ['a fraction', encodeCursor({ seq: 1.5 })],
    ['the wrong shape', encodeCursor({ e: 'x', s: 1 })],
    ['a NUL in a key', encodeCursor({ e: 1, s: 'a\u0000b' })],
    ['a date that does not exist', encodeCursor({ t: '2026-02-31 10:00:00+00', i: 'run_x' })],
    ['a timestamp of the wrong type', encodeCursor({ t: 12345, i: 'run_x' })],
  ] as const;

  it.each(wrong)('%s', async (_label, cursor) => {
    const bot = await newBot();
    const session = await ownerSession(bot);
    const c = encodeURIComponent(cursor);
    const responses = [
      await http(`/v1/api/messages?session_id=s&cursor=${c}`, { key: bot.keys.secret_key }),
      await http(`/v1/api/knowledge?cursor=${c}`, { key: bot.keys.secret_key }),
      await http(`/v1/api/operator/threads?cursor=${c}`, { key: bot.keys.secret_key }),
      await http(`/v1/dashboard/bots/${bot.bot_id}/runs?cursor=${c}`, { headers: session }),
    ];
    expect(responses.map((r) => [r.status, r.body.code])).toEqual(responses.map(() => [400, 'bad_request']));
  });
});

describe('text Postgres cannot store', () => {
  it('is refused with 400 naming the field on every surface, and the session goes on working', async () => {
    const bot = await newBot();
    const session = await ownerSession(bot);
    const sid = randomUUID();
    const raw = (path: string, json: string, headers: Record<string, string> = {}) =>
      http(path, {
        key: bot.keys.secret_key,
        rawBody: json,
        headers: { 'Content-Type': 'application/json', ...headers },
      });
    const cases = [
      ['message', await chat(bot, { session_id: sid, message: 'a\u0000b' })],
      ['page_context', await raw('/v1/api/chat', `{"session_id":"${sid}","message":"hi","page_context":"x\\ud800y"}`)],
      ['user_token', await chat(bot, { session_id: sid, message: 'hi', user_token: 'u\u0000' })],
      ['session_id', await http(`/v1/api/messages?session_id=a%00b`, { key: bot.keys.secret_key })],
      ['text', await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { text: 'fact\u0000' } })],
      ['title', await raw('/v1/api/knowledge', '{"text":"fine","title":"\\udc00"}')],
      [
        'instructions',
        await http(`/v1/dashboard/bots/${bot.bot_id}`, {
          method: 'PATCH',
          body: { instructions: 'be\u0000nice' },
          headers: session,
        }),
      ],
      [
        'task',
        await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
          body: { kind: 'manual', task: 'do\u0000it' },
          headers: session,
        }),
      ],
    ] as const;
    for (const [field, res] of cases) {
      expect([field, res.status, res.body.code]).toEqual([field, 400, 'bad_request']);
      expect(res.body.error).toContain(field);
    }
    // An operator reply with NUL, on a conversation that exists.
    expect((await chat(bot, { session_id: sid, message: 'hello' })).status).toBe(200);
    const reply = await http(`/v1/api/operator/threads/${sid}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'x\u0000' },
    });
    expect([reply.status, reply.body.code]).toEqual([400, 'bad_request']);
    // Nothing was wedged: the next turns of the same session are answered at once.
    const next = await chat(bot, { session_id: sid, message: 'still there?' });
    expect(next.status).toBe(200);
    expect(next.body.answer).toContain('still there?');
  });
});

describe('blank text is blank to every reader of the contract', () => {
  // schemathesis (Python) found "\r" accepted by the declared schema but refused by the server: "not blank" is now
  // one pattern both sides read alike (lib/text.ts, NOT_BLANK).
  it.each(['\r', ' \t\n', '\ufeff', '\u00a0\u2028', '\u001c'])(
    'a message of only %j is 400; one real letter is fine',
    async (blank) => {
      const bot = await newBot();
      const refused = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: blank } });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('message') });
      const source = await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { text: blank } });
      expect(source.status).toBe(400);
      const fine = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: `${blank}a${blank}` } });
      expect(fine.status).toBe(200);
    },
  );

  it('the contract declares the same pattern the server checks', async () => {
    const doc = (await http('/v1/openapi.json')).body;
    const message = doc.components.schemas.ChatRequest.properties.message;
    const pattern = new RegExp(message.pattern);
    for (const blank of ['\r', '\ufeff', '\u001c']) expect(pattern.test(blank)).toBe(false);
    expect(pattern.test(' a ')).toBe(true);
  });
});

describe('streams with an Idempotency-Key', () => {
  it('an error frame is not stored as a replayable success: the retry runs again', async () => {
    const bot = await newBot();
    const tag = `idem-stream-${randomUUID()}`;
    await fetch(`${stackInfo().fakeOpenAIUrl.replace(/\/v1\/?$/, '')}/_control/script`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tag, steps: [{ status: 401 }, { text: 'second time lucky' }] }),
    });
    const body = { session_id: randomUUID(), message: `[[fake:script:${tag}]] hello` };
    const headers = { 'Idempotency-Key': `k-${tag}` };
    const first = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body, headers });
    expect(first.frames.find((f) => 'error' in f)).toMatchObject({ code: 'llm_unavailable' });
    const retry = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body, headers });
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
    expect(retry.frames.some((f) => 'error' in f)).toBe(false);
    expect(retry.frames.map((f) => f.delta ?? '').join('')).toBe('second time lucky');
    // Now it is a success: the next repeat is its replay.
    const replay = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body, headers });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.raw).toBe(retry.raw);
  });

  it('a client that disconnects mid-stream leaves the key for as long as the turn runs, then its replay', async () => {
    const bot = await newBot();
    const key = `k-${randomUUID()}`;
    const body = { session_id: randomUUID(), message: '[[fake:slow-1500]] tell me everything' };
    const controller = new AbortController();
    const res = await fetch(`${stackInfo().apiUrl}/v1/api/chat/stream`, {
      method: 'POST',
      headers: { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    controller.abort(); // gone before the first fragment
    const started = Date.now();
    const replay = await waitUntil('the stored stream', async () => {
      const r = await sseFrames('/v1/api/chat/stream', {
        key: bot.keys.secret_key,
        body,
        headers: { 'Idempotency-Key': key },
      });
      return r.status === 200 ? r : undefined;
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.frames.at(-1)).toMatchObject({ done: true, session_id: body.session_id });
    expect(replay.frames.map((f) => f.delta ?? '').join('')).toContain('tell me everything');
  });

  it('a retry that takes over the key of a turn still running joins that turn: one turn, one model call', async () => {
    // A turn long enough for the first attempt's lease renewal (every 5 s) to come while it runs: an API of this
    // test's own with a longer turn budget than the shared one.
    const api = await startInProcessApi({ LLM_TURN_TIMEOUT_MS: '15000' });
    try {
      const bot = await newBot();
      const tag = `takeover-${randomUUID()}`;
      const key = `k-${tag}`;
      const body = { session_id: randomUUID(), message: `[[fake:slow-9000]][[fake:tag:${tag}]] a slow question` };
      const send = () =>
        http('/v1/api/chat', {
          key: bot.keys.secret_key,
          body,
          headers: { 'Idempotency-Key': key },
          baseUrl: api.url,
        });
      const first = send();
      await waitUntil('the first attempt to be running', async () => (await fakeRequests(tag)).length > 0);
      // As if the first attempt's process had stalled: its lease ran out, so the key may be taken over — and stays
      // so when the stalled owner's next renewal comes, since a lapsed lease is lost, not renewed.
      await testDb().query(
        `UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE idempotency_key = $1`,
        [key],
      );
      await new Promise((r) => setTimeout(r, 5_500));
      const lease = await testDb().query<{ lapsed: boolean; state: string }>(
        `SELECT lease_until < now() AS lapsed, state FROM idempotency_keys WHERE idempotency_key = $1`,
        [key],
      );
      expect(lease.rows[0]).toEqual({ lapsed: true, state: 'in_progress' });
      const second = await send();
      const firstRes = await first;
      expect(firstRes.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body.answer).toBe(firstRes.body.answer);
      expect(await fakeRequests(tag)).toHaveLength(1);
      const visitorMessages = await testDb().query(
        `SELECT 1 FROM messages WHERE session_id = $1 AND author = 'visitor'`,
        [body.session_id],
      );
      expect(visitorMessages.rowCount).toBe(1);
    } finally {
      await api.close();
    }
  }, 45_000);
});

describe('a webhook receiver that answers 2xx with a large body', () => {
  it('has received the event: one attempt, delivered', async () => {
    let calls = 0;
    const big = 'x'.repeat(2 * 1024 * 1024);
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls++;
        res.writeHead(200, { 'content-type': 'text/plain' }).end(big);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const bot = await newBot();
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [
        bot.bot_id,
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      ]);
      const sid = randomUUID();
      await chat(bot, { session_id: sid, message: 'hello' });
      await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: sid } });
      const delivery = await waitUntil('the delivery', async () => {
        const r = await testDb().query(`SELECT status, attempts FROM webhook_deliveries WHERE session_id = $1`, [sid]);
        return r.rows[0]?.status === 'delivered' ? r.rows[0] : undefined;
      });
      expect(delivery.attempts).toBe(1);
      expect(calls).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('visitor erase removes everything', () => {
  it('every run of the conversation workflow, approvals with their arguments and notifications, stored responses', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      const act = await http(`/v1/dashboard/bots/${bot.bot_id}/actions`, {
        headers: session,
        body: { name: 'charge_card', description: 'Charges a card', url: target.url, requires_approval: true },
      });
      expect(act.status).toBe(201);
      const sid = randomUUID();
      const key = `erase-${randomUUID()}`;
      const first = await chat(
        bot,
        { session_id: sid, message: 'hello', user_token: 'v-9' },
        { 'Idempotency-Key': key },
      );
      expect(first.status).toBe(200);
      // A second run of the same workflow id: the first ends (as after an idle end), the next message starts another.
      const handle = client.workflow.getHandle(conversationWorkflowId(bot.bot_id, sid));
      const firstRun = (await handle.describe()).runId;
      await handle.terminate('test: end this run');
      await chat(bot, {
        session_id: sid,
        message: 'charge my card [[fake:tool-call:charge_card:{"card":"4111-1111"}]]',
      });
      const approval = await waitUntil('the approval', async () => {
        const r = await testDb().query(`SELECT id, workflow_id, arguments FROM action_approvals WHERE bot_id = $1`, [
          bot.bot_id,
        ]);
        return r.rows[0];
      });
      expect(approval.workflow_id).toBe(approvalWorkflowId(approval.id));
      expect((await testDb().query(`SELECT 1 FROM notifications WHERE id = $1`, [`ntf_${approval.id}`])).rowCount).toBe(
        1,
      );

      const erased = await http('/v1/api/visitors/erase', { key: bot.keys.secret_key, body: { session_id: sid } });
      expect(erased.body).toEqual({ status: 'erased', conversations: 1 });

      const db = testDb();
      expect((await db.query(`SELECT 1 FROM action_approvals WHERE id = $1`, [approval.id])).rowCount).toBe(0);
      expect((await db.query(`SELECT 1 FROM notifications WHERE id = $1`, [`ntf_${approval.id}`])).rowCount).toBe(0);
      expect((await db.query(`SELECT 1 FROM idempotency_keys WHERE idempotency_key = $1`, [key])).rowCount).toBe(0);
      const gone = async (workflowId: string, runId?: string) =>
        waitUntil(
          `${workflowId} ${runId ?? '(latest run)'} deleted`,
          async () => {
            try {
              await client.workflow.getHandle(workflowId, runId).describe();
              return false;
            } catch (err) {
              if (err instanceof WorkflowNotFoundError) return true;
              throw err;
            }
          },
          60_000,
        );
      // Deletion is asynchronous on the server, and slower for a run that was still going.
      await Promise.all([
        gone(conversationWorkflowId(bot.bot_id, sid), firstRun),
        gone(conversationWorkflowId(bot.bot_id, sid)),
        gone(approval.workflow_id),
      ]);
      // The stored answer is gone too: the same key runs again instead of replaying the visitor's words.
      const again = await chat(
        bot,
        { session_id: sid, message: 'hello', user_token: 'v-9' },
        { 'Idempotency-Key': key },
      );
      expect(again.headers.get('idempotency-replayed')).toBeNull();
    } finally {
      await target.close();
    }
  }, 90_000);
});

describe('writes that span Postgres and Temporal converge', () => {
  it('a trigger and a scanned address whose Schedules were never made, and a decision never delivered, are converged by maintenance', async () => {
    const bot = await newBot();
    const db = testDb();
    // A schedule trigger as a crash between the row and its Schedule leaves it.
    const tid = `trg_converge_${randomUUID().slice(0, 8)}`;
    await db.query(
      `INSERT INTO triggers (id, bot_id, workspace_id, kind, name, task, every_seconds, schedule_rev, schedule_synced_rev, updated_at)
       VALUES ($1, $2, $3, 'schedule', 'orphan', 'tick', 3600, 1, 0, now() - interval '5 minutes')`,
      [tid, bot.bot_id, bot.workspace_id],
    );
    // A scanned address whose refresh Schedule was wanted but never set.
    const url = `https://converge-${randomUUID().slice(0, 8)}.example.test/`;
    await db.query(
      `INSERT INTO scan_schedules (bot_id, scan_key, workspace_id, url, max_pages, refresh_days, rev, synced_rev, updated_at)
       VALUES ($1, $2, $3, $4, 1, 7, 1, 0, now() - interval '5 minutes')`,
      [bot.bot_id, scanKey(url), bot.workspace_id, url],
    );
    // An approval decided in Postgres whose signal never reached the waiting workflow.
    const sid = randomUUID();
    await chat(bot, { session_id: sid, message: 'hello' });
    const approvalId = `apr_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    const waiting = await client.workflow.start(actionApprovalWorkflow, {
      taskQueue: stackInfo().taskQueue,
      workflowId: approvalWorkflowId(approvalId),
      args: [
        {
          approvalId,
          botId: bot.bot_id,
          sessionId: sid,
          tool: { name: 'x', description: 'x', parameters: {}, kind: 'action', requiresApproval: true },
          arguments: '{}',
        },
      ],
    });
    await db.query(
      `INSERT INTO action_approvals (id, run_id, bot_id, action_id, arguments, workflow_id, status, decided_at)
       VALUES ($1, 'run_x', $2, 'act_x', '{}', $3, 'rejected', now() - interval '5 minutes')`,
      [approvalId, bot.bot_id, waiting.workflowId],
    );

    const result = await client.workflow.execute(maintenanceWorkflow, {
      taskQueue: stackInfo().taskQueue,
      workflowId: `test-converge-${randomUUID()}`,
    });
    expect(result.converged.triggers).toBeGreaterThanOrEqual(1);
    expect(result.converged.approvals).toBeGreaterThanOrEqual(1);
    expect(result.converged.scans).toBeGreaterThanOrEqual(1);
    const refresh = await client.schedule.getHandle(scanScheduleId(bot.bot_id, url)).describe();
    expect(refresh.spec.intervals?.[0]?.every).toBe(7 * 86_400_000);
    await client.schedule.getHandle(scanScheduleId(bot.bot_id, url)).delete();
    const schedule = await client.schedule.getHandle(triggerScheduleId(tid)).describe();
    expect(schedule.state.paused).toBe(false);
    const row = await db.query(`SELECT schedule_synced_rev, schedule_rev FROM triggers WHERE id = $1`, [tid]);
    expect(row.rows[0].schedule_synced_rev).toBe(row.rows[0].schedule_rev);
    expect(await waiting.result()).toEqual({ approved: false });
    await client.schedule.getHandle(triggerScheduleId(tid)).delete();
  }, 40_000);
});

describe('the OpenAPI document says what the server does', () => {
  it('TRACE and other undeclared methods are 405, never 501', async () => {
    // fetch() refuses TRACE itself: a plain node:http request.
    const send = (method: string) =>
      new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const req = httpRequest(`${stackInfo().apiUrl}/v1/api/messages?session_id=x`, { method }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || '{}') }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const method of ['TRACE', 'PROPFIND']) {
      const res = await send(method);
      expect([method, res.status, res.body.code]).toEqual([method, 405, 'method_not_allowed']);
    }
  });

  it('declares every status a route returns, refusals of empty fields, and patterns generators can satisfy', async () => {
    const doc = (await http('/v1/openapi.json')).body;
    const hook = await http(`/v1/hooks/${'t'.repeat(100)}`, { method: 'POST', rawBody: 'x' });
    expect(hook.status).toBe(400);
    expect(doc.paths['/v1/hooks/{tid}'].post.responses['400']).toBeDefined();
    const knowledge = doc.components.schemas.KnowledgeWriteRequest;
    expect(knowledge.properties.text.minLength).toBe(1);
    expect(JSON.stringify(doc)).not.toContain('\\\\p{');
    for (const [path, ops] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect([method, path, Object.keys(op.responses)]).toEqual([
          method,
          path,
          expect.arrayContaining(['500', '503']),
        ]);
      }
    }
  });
});
