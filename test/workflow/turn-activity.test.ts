import { afterAll, describe, expect, it } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type MessageTurnOutcome, createAgentRunActivities } from '../../activities/agent-run';
import { createOpenAiLlm } from '../../lib/llm';
import { applyTransition } from '../../lib/conversations/transitions';
import { type TurnSubscription, subscribeTurn } from '../../lib/conversations/turn';
import { createLogger } from '../../lib/logger';
import { DELTA_CHANNEL } from '../../lib/streams/channel';
import { createDeltaHub } from '../../lib/streams/listener';
import { createDeltaPublisher } from '../../lib/streams/publisher';
import type { AgentRunInput } from '../../workflows/contracts/agent-run';
import { fakeRequests, http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { createModelCatalogue } from '../../lib/billing/models';

/**
 * The chat turn's activity, run in Temporal's activity test environment against the stack's real Postgres and the
 * fake OpenAI server: what a replacement worker does when it retries a turn, and how the answer is announced.
 */
function turnActivities(seen?: string[], coalesceMs = 0) {
  const real = testDb();
  // With `seen`, each statement (a prepared statement by its name) and each model call is noted in order.
  const db = seen
    ? (Object.assign(Object.create(real), {
        query: (q: string | { name?: string; text: string }, ...rest: unknown[]) => {
          seen.push(typeof q === 'string' ? q.trim().split(/\s+/).slice(0, 3).join(' ') : (q.name ?? q.text));
          return (real.query as (...a: unknown[]) => unknown)(q, ...rest);
        },
      }) as typeof real)
    : real;
  const openai = createOpenAiLlm({ apiKey: 'test', baseURL: stackInfo().fakeOpenAIUrl, model: 'fake-model' });
  const llm: typeof openai = seen
    ? { ...openai, complete: (input) => (seen.push('the model'), openai.complete(input)) }
    : openai;
  const deps = {
    db,
    llm,
    defaultModel: 'fake-model',
    models: createModelCatalogue({ defaultModel: 'fake-model' }),
    retrieve: async () => [],
    deltas: createDeltaPublisher(db, { coalesceMs, retryForMs: 0 }),
  };
  return createAgentRunActivities(deps);
}

async function newTurn(text: string) {
  const bot = await newBot();
  const session = randomUUID();
  // The conversation exists (its first message went through the API).
  const first = await http('/v1/api/chat', {
    key: bot.keys.secret_key,
    body: { session_id: session, message: 'hello' },
  });
  expect(first.status).toBe(200);
  const id = randomUUID().replace(/-/g, '').slice(0, 20);
  const at = Date.now();
  const run: AgentRunInput = {
    runId: `run_${id}`,
    botId: bot.bot_id,
    workspaceId: bot.workspace_id,
    triggerKind: 'message',
    input: text,
    sessionId: session,
    messageId: `msg_v${id}`,
    turnTimeoutMs: 4_000,
  };
  const input = {
    visitor: {
      botId: bot.bot_id,
      sessionId: session,
      messages: [{ id: `msg_v${id}`, author: 'visitor' as const, text, at }],
    },
    run,
  };
  return { bot, session, run, input };
}

describe('the chat turn activity', () => {
  const listeners: pg.Client[] = [];
  afterAll(async () => Promise.all(listeners.map((c) => c.end())));

  it('retried after an answer it could not give was stored, returns it with what it offered, so the hand-over happens', async () => {
    const tag = `retry-limit-${randomUUID()}`;
    const { input } = await newTurn(`[[fake:tag:${tag}]][[fake:tool-call:cannot_answer]] Do you sell boats?`);
    const activities = turnActivities();
    const first = (await new MockActivityEnvironment().run(activities.answerMessage, input)) as MessageTurnOutcome;
    const retried = await new MockActivityEnvironment({ attempt: 2 }).run(activities.answerMessage, input);
    expect(first).toMatchObject({ unanswered: 'offer', answer: expect.stringContaining("can't answer that") });
    expect(retried).toEqual(first);
    expect(await fakeRequests(tag)).toHaveLength(1);
  });

  it('retried after its answer was stored, returns that answer and neither asks the model again nor charges twice', async () => {
    const tag = `retry-${randomUUID()}`;
    const { bot, session, run, input } = await newTurn(`[[fake:tag:${tag}]]What are your hours?`);
    const activities = turnActivities();

    const first = (await new MockActivityEnvironment().run(activities.answerMessage, input)) as MessageTurnOutcome;
    // The worker died before reporting the activity: the replacement runs it again with the same ids.
    const retried = await new MockActivityEnvironment({ attempt: 2 }).run(activities.answerMessage, input);

    expect(first.answer).toContain('What are your hours?');
    expect(retried).toEqual(first);
    expect(await fakeRequests(tag)).toHaveLength(1);
    const db = testDb();
    const charges = await db.query(`SELECT amount FROM credit_ledger WHERE run_id = $1`, [run.runId]);
    expect(charges.rows).toHaveLength(1);
    const answers = await db.query(`SELECT text FROM messages WHERE session_id = $1 AND author = 'bot' AND id = $2`, [
      session,
      `msg_${run.runId.slice(4)}`,
    ]);
    expect(answers.rows).toEqual([{ text: first.answer }]);
    const runs = await db.query(`SELECT status, answer FROM runs WHERE id = $1 AND bot_id = $2`, [
      run.runId,
      bot.bot_id,
    ]);
    expect(runs.rows).toEqual([{ status: 'done', answer: first.answer }]);
  });

  it('asks the model of a streamed new question after one statement, and stores its answer in one', async () => {
    const { run, input } = await newTurn(`A question nobody asked before ${randomUUID()}`);
    const seen: string[] = [];
    const streamed = { ...input, run: { ...run, streamTurnId: run.runId } };
    const out = (await new MockActivityEnvironment().run(
      turnActivities(seen).answerMessage,
      streamed,
    )) as MessageTurnOutcome;
    expect(out.answer).toContain('A question nobody asked before');
    // startRun records the visitor message and the run, reads the agent and the history, sees no cached answer for
    // the question and claims the stream, all in one round trip; then the model, the fragments, and the answer.
    expect(seen.slice(0, seen.indexOf('the model') + 1)).toEqual(['start-run', 'the model']);
    expect(seen.at(-1)).toBe('finish-run');
    expect(seen.filter((q) => q !== 'turn-stream-send-batch')).toEqual(['start-run', 'the model', 'finish-run']);
  });

  it("leaves an announced answer's last fragments to its announcement: no statement ends the stream", async () => {
    // Paced like a real model: the first piece after 20 ms, the rest over the next 300.
    const { run, input } = await newTurn(`[[fake:pace-20-320-8]] Another new question ${randomUUID()}`);
    const seen: string[] = [];
    // A window longer than the turn: after the first piece (which goes at once), fragments wait for the window.
    const activities = turnActivities(seen, 60_000);
    const streamed = { ...input, run: { ...run, streamTurnId: run.runId } };
    const out = (await new MockActivityEnvironment().run(activities.answerMessage, streamed)) as MessageTurnOutcome;
    expect(out.answer).toContain('Another new question');
    // The first piece, then the answer (announced with its whole text): the rest of the stream is never sent alone.
    expect(seen).toEqual(['start-run', 'the model', 'turn-stream-send-batch', 'finish-run']);
    const row = await testDb().query<{ text: string }>(`SELECT text FROM turn_streams WHERE turn_id = $1`, [run.runId]);
    expect(out.answer!.startsWith(row.rows[0].text)).toBe(true);
    expect(row.rows[0].text.length).toBeLessThan(out.answer!.length);
  });

  it('stores nothing when another attempt took its stream over before it finished', async () => {
    const { session, run, input } = await newTurn(`[[fake:pace-20-600-8]] A question for two attempts ${randomUUID()}`);
    const streamed = { ...input, run: { ...run, streamTurnId: run.runId } };
    const first = new MockActivityEnvironment().run(turnActivities(undefined, 60_000).answerMessage, streamed);
    first.catch(() => undefined);
    // Once its first piece is stored, a replacement attempt claims the stream (as after the first was thought dead).
    const db = testDb();
    for (let i = 0; i < 100; i++) {
      const row = await db.query<{ len: number }>(`SELECT len FROM turn_streams WHERE turn_id = $1`, [run.runId]);
      if ((row.rows[0]?.len ?? 0) > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await db.query(`UPDATE turn_streams SET owner = gen_random_uuid() WHERE turn_id = $1`, [run.runId]);

    await expect(first).rejects.toThrow(/taken over/);
    const runs = await db.query(`SELECT status FROM runs WHERE id = $1`, [run.runId]);
    expect(runs.rows).toEqual([{ status: 'running' }]);
    const answers = await db.query(`SELECT 1 FROM messages WHERE session_id = $1 AND id = $2`, [
      session,
      `msg_${run.runId.slice(4)}`,
    ]);
    expect(answers.rowCount).toBe(0);
    expect((await db.query(`SELECT 1 FROM credit_ledger WHERE run_id = $1`, [run.runId])).rowCount).toBe(0);
  });

  it('announces the answer on the turn channel once it is committed to the transcript', async () => {
    const { session, run, input } = await newTurn('Tell me about pricing');
    const listener = new pg.Client({ connectionString: stackInfo().databaseUrl });
    listeners.push(listener);
    await listener.connect();
    const seen: { payload: Record<string, unknown>; inTranscript: boolean }[] = [];
    const check = new pg.Client({ connectionString: stackInfo().databaseUrl });
    listeners.push(check);
    await check.connect();
    const arrived = new Promise<void>((resolve) => {
      listener.on('notification', async (n) => {
        const payload = JSON.parse(n.payload ?? '{}') as Record<string, unknown>;
        if (payload.t !== run.runId) return;
        // Read from another connection the moment it arrives: the answer must already be there.
        const row = await check.query(`SELECT 1 FROM messages WHERE session_id = $1 AND author = 'bot' AND id = $2`, [
          session,
          `msg_${run.runId.slice(4)}`,
        ]);
        seen.push({ payload, inTranscript: row.rowCount === 1 });
        resolve();
      });
    });
    await listener.query(`LISTEN ${DELTA_CHANNEL}`);

    const out = (await new MockActivityEnvironment().run(turnActivities().answerMessage, input)) as MessageTurnOutcome;
    await arrived;
    expect(seen).toEqual([{ payload: { t: run.runId, a: out.answer }, inTranscript: true }]);
  });
});

describe("a turn's outcome, announced by the statement that records it", () => {
  const hub = createDeltaHub(stackInfo().databaseUrl, createLogger('silent', 'test'));
  afterAll(() => hub.close());
  const subscribe = (turnId: string) =>
    subscribeTurn({ db: testDb(), deltaHub: hub }, turnId) as Promise<TurnSubscription>;

  it('a failure, with its record: the outcome the conversation returns', async () => {
    const { run, input } = await newTurn('[[fake:fail-429]] Anyone there?');
    const subscription = await subscribe(run.runId);
    const out = (await new MockActivityEnvironment().run(turnActivities().answerMessage, input)) as MessageTurnOutcome;
    expect(out.failure).toMatchObject({ type: 'llm_overloaded' });
    await expect(subscription.announced).resolves.toEqual({ answer: '', runId: run.runId, error: out.failure });
    const runs = await testDb().query(`SELECT status, error_code FROM runs WHERE id = $1`, [run.runId]);
    expect(runs.rows).toEqual([{ status: 'failed', error_code: 'llm_overloaded' }]);
    subscription.close();
  });

  it('an answer too long for a notification, without its text: the subscriber reads it from the transcript', async () => {
    const text = 'é'.repeat(3_980) + 'z'.repeat(4_000);
    const { run, input } = await newTurn(`[[fake:echo]]${text}`);
    const listener = await testDb().connect();
    const payload = new Promise<unknown>((resolve) =>
      listener.on('notification', (n) => n.payload?.includes(run.runId) && resolve(JSON.parse(n.payload))),
    );
    await listener.query(`LISTEN ${DELTA_CHANNEL}`);
    const subscription = await subscribe(run.runId);
    try {
      const out = (await new MockActivityEnvironment().run(
        turnActivities().answerMessage,
        input,
      )) as MessageTurnOutcome;
      expect(out.answer).toBe(text);
      await expect(subscription.announced).resolves.toEqual({ answer: text, runId: run.runId });
      await expect(payload).resolves.toEqual({ t: run.runId, r: { answer: '' }, m: 1 });
    } finally {
      subscription.close();
      await listener.query(`UNLISTEN ${DELTA_CHANNEL}`);
      listener.release();
    }
  });

  it('a hand-over, when the transition that records it commits: the conversation reads `waiting` by then', async () => {
    const { bot, session, run } = await newTurn('A person, please');
    const subscription = await subscribe(run.runId);
    const at = Date.now();
    const result = { answer: 'A person will reply here.', handoff: true as const, afterHours: { backAt: null } };
    await applyTransition(testDb(), {
      botId: bot.bot_id,
      sessionId: session,
      status: 'waiting',
      escalated: true,
      escalationReason: 'requested',
      afterHours: { backAt: null },
      messages: [{ id: `msg_${run.runId.slice(4)}`, author: 'bot', text: result.answer, at }],
      event: { deliveryId: `dlv_${randomUUID()}`, kind: 'escalated', at },
      announce: { turnId: run.runId, result },
    });
    const announced = await subscription.announced;
    const status = await testDb().query(`SELECT status FROM conversations WHERE session_id = $1`, [session]);
    expect(announced).toEqual({ ...result, runId: run.runId });
    expect(status.rows).toEqual([{ status: 'waiting' }]);
    subscription.close();
  });
});
