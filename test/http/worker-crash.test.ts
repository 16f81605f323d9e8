import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  type OwnPlatform,
  fakeRequests,
  http,
  newBot,
  ownerSession,
  startActionTarget,
  sseFrames,
  startOwnPlatform,
  testDb,
  transcriptOf,
  waitUntil,
  turnRunning,
  useTemporalClient,
} from '../support/helpers';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { startInProcessApi } from '../support/in-process-api';
import { stackInfo } from '../support/stack-info';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';

/**
 * Fails the workflow's task until the server refuses updates to the workflow (its task has failed twice in a row,
 * Temporal's rule), as a worker that crashes or stalls on it would. The test takes the task queue's workflow tasks
 * itself, through Temporal's worker API, and answers each with a failure: the platform's worker must be stopped
 * meanwhile. (Not a SIGSTOPped worker: the tasks it holds while stopped may be lost when it resumes, and then they
 * come back only after their 10 s timeout — too late for a test of what happens within 10 s.)
 */
async function failWorkflowTask(temporal: Client, handle: WorkflowHandle, taskQueue: string): Promise<void> {
  const { workflowService } = temporal;
  const namespace = stackInfo().namespace;
  const identity = 'worker-crash.test, failing tasks';
  // Its next task goes to the task queue, not to the stopped worker's own (sticky) queue.
  await workflowService.resetStickyTaskQueue({ namespace, execution: { workflowId: handle.workflowId } });
  await handle.signal('nudge'); // a signal nothing handles: a workflow task
  await waitUntil(
    'the workflow task to have failed twice',
    async () => {
      const task = await temporal.connection
        .withDeadline(Date.now() + 5_000, () =>
          workflowService.pollWorkflowTaskQueue({ namespace, identity, taskQueue: { name: taskQueue } }),
        )
        .catch(() => undefined); // no task in the poll's time
      if (task?.taskToken?.length)
        await workflowService.respondWorkflowTaskFailed({
          namespace,
          identity,
          taskToken: task.taskToken,
          cause:
            proto.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
          failure: { message: 'failed by the test' },
        });
      return ((await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0) >= 3;
    },
    60_000,
  );
}

/** The id of the builder thread workflow of the bot's workspace (its one thread: the HTTP call's). */
async function builderThreadOf(temporal: Client, botId: string): Promise<string> {
  const { rows } = await testDb().query<{ workspace_id: string }>(`SELECT workspace_id FROM bots WHERE id = $1`, [
    botId,
  ]);
  const query = `WorkflowType = 'builderThreadWorkflow' AND WorkspaceId = '${rows[0].workspace_id}'`;
  const ids: string[] = [];
  await waitUntil('the builder thread to be listed', async () => {
    for await (const wf of temporal.workflow.list({ query })) ids.push(wf.workflowId);
    return ids.length > 0;
  });
  expect(ids).toHaveLength(1);
  return ids[0];
}

/**
 * Its own API and worker on a task queue of their own (same Postgres and Temporal), so killing the worker
 * disturbs no other test.
 */
describe('a worker killed or stalled in the middle of a turn', () => {
  let own: OwnPlatform;
  let baseUrl: string;
  const temporal = useTemporalClient();

  beforeAll(async () => {
    // Long enough that the turn outlives the worker's replacement (the workflow task of the dead worker times
    // out after 10 s before the new worker takes it).
    own = await startOwnPlatform('crash-test', { LLM_TURN_TIMEOUT_MS: '40000' });
    baseUrl = own.baseUrl;
  }, 120_000);

  afterAll(async () => own?.stop());

  it('completes after a new worker starts, and the conversation is consistent', async () => {
    const bot = await newBot();
    // The model takes 3 s: the worker dies while the answer is being generated.
    await testDb().query(`UPDATE bots SET model = 'fake-slow-3000' WHERE id = $1`, [bot.bot_id]);
    const session = randomUUID();
    const pending = http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'survive this' },
      baseUrl,
    });

    await turnRunning(bot.bot_id);
    await new Promise((r) => setTimeout(r, 500));
    await own.restartWorker();

    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain('Fake answer: survive this');

    const messages = await transcriptOf(session);
    expect(messages.map((m) => m.author)).toEqual(['visitor', 'bot']);
    expect(messages[1].text).toBe(res.body.answer);
    const runs = await testDb().query(`SELECT status FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows).toEqual([{ status: 'done' }]);
  }, 90_000);

  it('a worker killed mid-stream: the new worker continues the text, and the stream equals the stored answer', async () => {
    const bot = await newBot();
    // A paced model: 280 characters in 4-character pieces over 6 s, so the worker dies with part of it shown.
    await testDb().query(`UPDATE bots SET model = 'fake-pace-200-6000-4' WHERE id = $1`, [bot.bot_id]);
    const tag = `stream-crash-${randomUUID()}`;
    const session = randomUUID();
    const streaming = sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: `[[fake:length-280]][[fake:tag:${tag}]]keep the thread` },
      baseUrl,
    });

    const shownBeforeCrash = await waitUntil('part of the answer to be streamed', async () => {
      const row = await testDb().query(
        `SELECT s.len FROM turn_streams s JOIN runs r ON r.id = s.turn_id WHERE r.bot_id = $1`,
        [bot.bot_id],
      );
      return (row.rows[0]?.len ?? 0) >= 40 ? (row.rows[0].len as number) : undefined;
    });
    await own.restartWorker();

    const { status, frames } = await streaming;
    expect(status).toBe(200);
    expect(frames.filter((f) => 'error' in f)).toEqual([]);
    expect(frames.at(-1)).toMatchObject({ done: true, session_id: session });
    const streamed = frames
      .filter((f) => 'delta' in f)
      .map((f) => f.delta)
      .join('');

    const stored = await testDb().query(`SELECT text FROM messages WHERE session_id = $1 AND author = 'bot'`, [
      session,
    ]);
    expect(stored.rows).toHaveLength(1);
    expect(streamed).toBe(stored.rows[0].text);
    expect(streamed).toHaveLength(280);
    expect(streamed.startsWith('Fake answer: keep the thread')).toBe(true);

    // The new worker asked the model for the rest only: the text shown before the crash went back as the
    // assistant's words, not generated again.
    const requests = await fakeRequests(tag);
    expect(requests).toHaveLength(2);
    const retry = requests[1].body.messages as { role: string; content: string }[];
    const shown = retry.at(-2)!;
    expect(shown.role).toBe('assistant');
    expect(shown.content.length).toBeGreaterThanOrEqual(shownBeforeCrash);
    expect(streamed.startsWith(shown.content)).toBe(true);
    expect(retry.at(-1)!.content).toMatch(/^Your answer above was cut off/);
  }, 90_000);

  it('a worker killed while a run waits for approval loses nothing: the approval after restart completes the run', async () => {
    const target = await startActionTarget();
    try {
      const bot = await newBot();
      const session = await ownerSession(bot);
      await http(`/v1/dashboard/bots/${bot.bot_id}/actions`, {
        body: { name: 'pay_supplier', description: 'Pays a supplier', url: target.url, requires_approval: true },
        headers: session,
        baseUrl,
      });
      const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
        body: { kind: 'manual', task: 'Pay the supplier [[fake:tool-call:pay_supplier:{"eur":10}]]' },
        headers: session,
        baseUrl,
      });
      const started = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${trigger.body.id}/run`, {
        body: {},
        headers: session,
        baseUrl,
      });
      expect(started.status).toBe(202);
      let approvalId = '';
      const deadline = Date.now() + 20_000;
      while (!approvalId && Date.now() < deadline) {
        const a = await testDb().query(`SELECT id FROM action_approvals WHERE run_id = $1`, [started.body.run_id]);
        approvalId = a.rows[0]?.id ?? '';
        if (!approvalId) await new Promise((r) => setTimeout(r, 100));
      }
      expect(approvalId).toMatch(/^apr_/);

      await own.restartWorker();

      const approved = await http(`/v1/dashboard/bots/${bot.bot_id}/approvals/${approvalId}/approve`, {
        method: 'POST',
        headers: session,
        baseUrl,
      });
      expect(approved.status).toBe(200);
      const doneBy = Date.now() + 40_000;
      let run: { status: string; answer: string } | undefined;
      while (Date.now() < doneBy) {
        run = (await testDb().query(`SELECT status, answer FROM runs WHERE id = $1`, [started.body.run_id])).rows[0];
        if (run?.status === 'done') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(run?.status).toBe('done');
      expect(run?.answer).toContain('Tool pay_supplier returned: HTTP 200');
      expect(target.calls).toHaveLength(1);
    } finally {
      await target.close();
    }
  }, 90_000);

  it("a turn refused while the conversation's workflow task keeps failing is sent again for 10 s: answered once a task gets through, else 503 llm_overloaded with nothing stored", async () => {
    const bot = await newBot();
    // One conversation, begun in the widget (whose end frame says whether the visitor's message was stored) and
    // continued through the API.
    const visitor = await http('/v1/widget/session', { method: 'POST', key: bot.keys.public_key, baseUrl });
    const session = visitor.body.session_id as string;
    const fromWidget = (message: string) =>
      sseFrames('/v1/widget/chat/stream', {
        key: bot.keys.public_key,
        body: { session_id: session, message },
        headers: { 'X-Visitor-Token': visitor.body.visitor_token },
        baseUrl,
      });
    const chat = (message: string) =>
      http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message }, baseUrl });
    expect((await fromWidget('first')).status).toBe(200);
    const handle = temporal.workflow.getHandle(conversationWorkflowId(bot.bot_id, session));
    await own.stopWorker();
    let stopped = true;
    try {
      await failWorkflowTask(temporal, handle, own.env.TEMPORAL_TASK_QUEUE);

      // Refused for longer than the resends last: the contract's "busy, retry" and nothing of the turn stored; the
      // widget's end frame names no visitor message, so the widget gives the text back to be sent again.
      const [refused, refusedStream] = await Promise.all([chat('refused'), fromWidget('refused from the widget')]);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'llm_overloaded', retry_after: 2, session_id: session });
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refusedStream.frames).toEqual([
        { error: expect.any(String), code: 'llm_overloaded', retry_after: 2 },
        expect.objectContaining({ done: true, handoff: false }),
      ]);
      expect(refusedStream.frames[1]).not.toHaveProperty('visitor_message_id');

      // Refused at first, then a worker takes the task: the same turn, sent again, is answered.
      const pending = chat('second');
      let settled = false;
      void pending.then(() => (settled = true));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(settled).toBe(false); // sent again meanwhile, not failed at once
      await own.startWorker();
      stopped = false;

      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body.answer).toBe('Fake answer: second');
      expect(await transcriptOf(session)).toEqual([
        { author: 'visitor', text: 'first' },
        { author: 'bot', text: 'Fake answer: first' },
        { author: 'visitor', text: 'second' },
        { author: 'bot', text: 'Fake answer: second' },
      ]);
    } finally {
      if (stopped) await own.startWorker();
    }
  }, 150_000);

  it("a builder message refused while its thread's workflow task keeps failing answers busy, having changed nothing", async () => {
    const bot = await newBot();
    const builder = (message: string) =>
      http('/v1/dashboard/builder', { key: bot.keys.builder_key, body: { message }, baseUrl });
    expect((await builder('hello')).status).toBe(200);
    const thread = temporal.workflow.getHandle(await builderThreadOf(temporal, bot.bot_id));
    await own.stopWorker();
    try {
      await failWorkflowTask(temporal, thread, own.env.TEMPORAL_TASK_QUEUE);
      // Said as when the thread is busy with a turn (not a 500): the caller sends the message again.
      const refused = await builder('refused by the builder');
      expect(refused.status).toBe(200);
      expect(refused.body).toEqual({ reply: expect.stringMatching(/nothing was changed/), busy: true });
    } finally {
      await own.startWorker();
    }
    const again = await builder('again');
    expect(again.status).toBe(200);
    expect(again.body.busy).toBeUndefined();
  }, 120_000);

  it("a widget stream whose turn outlasts the API's wait ends with answer_pending, and the answer comes through the poll", async () => {
    // An API of the test's own on this worker's task queue, which waits 2 + 5 s for a turn.
    const api = await startInProcessApi({
      TEMPORAL_TASK_QUEUE: own.env.TEMPORAL_TASK_QUEUE,
      LLM_TURN_TIMEOUT_MS: '2000',
    });
    const pid = own.worker.child.pid!;
    let stalled = false;
    try {
      const bot = await newBot();
      const visitor = await http('/v1/widget/session', { method: 'POST', key: bot.keys.public_key, baseUrl: api.url });
      const token = { 'X-Visitor-Token': visitor.body.visitor_token };
      // The worker stalls with the turn's task in hand: the API stops waiting, the turn goes on once it resumes.
      process.kill(pid, 'SIGSTOP');
      stalled = true;
      const { frames } = await sseFrames('/v1/widget/chat/stream', {
        key: bot.keys.public_key,
        body: { session_id: visitor.body.session_id, message: 'worth the wait' },
        headers: token,
        baseUrl: api.url,
      });
      process.kill(pid, 'SIGCONT');
      stalled = false;
      expect(frames).toEqual([
        { error: expect.any(String), code: 'llm_overloaded', retry_after: 10 },
        expect.objectContaining({
          done: true,
          answer_pending: true,
          visitor_message_id: expect.any(String),
          message_id: expect.any(String),
        }),
      ]);

      const answered = await waitUntil('the answer in the poll', async () => {
        const polled = await http(`/v1/widget/messages?session_id=${visitor.body.session_id}`, {
          method: 'GET',
          key: bot.keys.public_key,
          headers: token,
          baseUrl: api.url,
        });
        return polled.body.messages?.find((m: { author: string }) => m.author === 'bot');
      });
      expect(answered.text).toBe('Fake answer: worth the wait');
      // The end frame named it: the widget offers to rate it when it comes.
      expect(answered.id).toBe(frames[1].message_id);
    } finally {
      if (stalled) process.kill(pid, 'SIGCONT');
      await api.close();
    }
  }, 60_000);
});
