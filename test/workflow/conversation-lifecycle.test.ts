/**
 * The conversation workflow's lifecycle on the real dev server, with an in-process worker on a task queue of its own:
 * continue-as-new (the status carried over, updates in flight when the threshold is reached all answered, none
 * lost or run twice) and the idle end (a bot-answered conversation ends after a whole window without activity; one
 * handed to a person does not). The activities are fakes that record their calls: the lifecycle is the workflow's
 * own logic, and the real activities are covered by the HTTP tests. The thresholds are shortened through
 * `ConversationInput.lifecycle`; their production values are asserted separately.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Context } from '@temporalio/activity';
import { Client, Connection, type ConnectionOptions, type WorkflowHandle } from '@temporalio/client';
import { arrayFromPayloads, defaultPayloadConverter } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentRunActivities } from '../../activities/agent-run';
import type { ConversationActivities } from '../../activities/conversation';
import { IDLE_END_MS, UPDATES_BEFORE_CONTINUE_AS_NEW, conversationWorkflow } from '../../workflows/conversation';
import {
  type ConversationInput,
  type TransitionInput,
  type VisitorMessageInput,
  conversationWorkflowId,
  handoffUpdate,
  operatorJoinedSignal,
  operatorReplyUpdate,
  resolveUpdate,
  statusQuery,
  visitorMessageUpdate,
} from '../../workflows/contracts/conversation';
import { updateConversation } from '../../lib/conversations/sessions';
import { stackInfo } from '../support/stack-info';

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

type FakeActivities = Pick<ConversationActivities, 'applyTransition'> &
  Pick<AgentRunActivities, 'answerMessage' | 'finishRun'>;

interface ActivityCall {
  activity: keyof FakeActivities;
  workflowId: string;
  runId: string;
  /** Ids of the messages the call wrote (visitor, bot, operator). */
  messageIds: string[];
}

const calls: ActivityCall[] = [];
/** Per conversation workflow: how long the fake activities take, so several updates are in flight at once. */
const delays = new Map<string, { transitionMs?: number; answerMs?: number }>();

function record(activity: keyof FakeActivities, messageIds: string[]) {
  const execution = Context.current().info.workflowExecution!;
  calls.push({ activity, workflowId: execution.workflowId, runId: execution.runId, messageIds });
  return delays.get(execution.workflowId) ?? {};
}

const activities: FakeActivities = {
  async applyTransition(input: TransitionInput) {
    const ids = input.messages.map((m) => m.id);
    const delay = record('applyTransition', ids);
    await sleep(delay.transitionMs ?? 0);
    // No webhook delivery: the workflow starts no child.
    return { deliveryId: null };
  },
  async answerMessage(input) {
    const delay = record('answerMessage', [input.run.messageId!]);
    await sleep(delay.answerMs ?? 0);
    return { answer: `fake answer to ${input.run.input}` };
  },
  async finishRun(input) {
    record('finishRun', [input.run.messageId!]);
  },
};

function callsOf(workflowId: string, activity?: keyof FakeActivities): ActivityCall[] {
  return calls.filter((c) => c.workflowId === workflowId && (!activity || c.activity === activity));
}

/** How many times each message id reached the fake activities of this workflow. */
function timesSeen(workflowId: string, activity: keyof FakeActivities): Record<string, number> {
  const seen: Record<string, number> = {};
  for (const c of callsOf(workflowId, activity)) for (const id of c.messageIds) seen[id] = (seen[id] ?? 0) + 1;
  return seen;
}

function once(ids: string[]): Record<string, number> {
  return Object.fromEntries(ids.map((id) => [id, 1]));
}

function visitorMessage(text: string, over: Partial<VisitorMessageInput> = {}): VisitorMessageInput {
  const id = randomUUID().replace(/-/g, '').slice(0, 20);
  return {
    messageId: `msg_v${id}`,
    runId: `run_${id}`,
    text,
    at: Date.now(),
    wantsHuman: false,
    handoffEnabled: true,
    turnTimeoutMs: 4_000,
    ...over,
  };
}

function operatorReply(text: string) {
  return { messageId: `msg_o${randomUUID().replace(/-/g, '').slice(0, 20)}`, text, at: Date.now() };
}

function timestampMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  const seconds = ts?.seconds as number | { toNumber(): number } | null | undefined;
  const s = typeof seconds === 'number' ? seconds : (seconds?.toNumber() ?? 0);
  return s * 1000 + Math.floor((ts?.nanos ?? 0) / 1e6);
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('conversationWorkflow lifecycle (fake activities, real dev server)', () => {
  const taskQueue = `conv-lifecycle-${randomUUID()}`;
  const started: string[] = [];
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  /** The API's way to a conversation (lib/conversations/turn.ts), through a client that notes each call it makes. */
  let api: Parameters<typeof updateConversation>[0];
  let apiConnection: Connection;
  const apiCalls: string[] = [];
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    const info = stackInfo();
    // The worker's own lines (bundle built, polling) would bury the test output.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    nativeConnection = await NativeConnection.connect({ address: info.temporalAddress });
    worker = await Worker.create({
      connection: nativeConnection,
      namespace: info.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities,
    });
    running = worker.run();
    connection = await Connection.connect({ address: info.temporalAddress });
    client = new Client({ connection, namespace: info.namespace });
    const noting: GrpcInterceptor = (options, nextCall) => {
      apiCalls.push(options.method_definition.path.split('/').at(-1)!);
      return nextCall(options) as ReturnType<GrpcInterceptor>;
    };
    apiConnection = await Connection.connect({ address: info.temporalAddress, interceptors: [noting] });
    const apiClient = new Client({ connection: apiConnection, namespace: info.namespace });
    api = { temporal: { connection: apiConnection, client: apiClient, taskQueue, namespace: info.namespace } };
  }, 120_000);

  afterAll(async () => {
    if (client) {
      for (const id of started) {
        await client.workflow
          .getHandle(id)
          .terminate('test over')
          .catch((err: Error) => {
            // Ended by itself (idle) or already gone.
            if (err.name !== 'WorkflowNotFoundError') throw err;
          });
      }
    }
    if (worker) {
      worker.shutdown();
      await running;
    }
    await connection?.close();
    await apiConnection?.close();
    await nativeConnection?.close();
  }, 60_000);

  function newInput(lifecycle: ConversationInput['lifecycle']): ConversationInput {
    const botId = `bot_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    return { botId, workspaceId: 'ws_lifecycle', sessionId: randomUUID(), lifecycle };
  }

  async function startConversation(
    lifecycle: ConversationInput['lifecycle'],
    timing: { transitionMs?: number; answerMs?: number } = {},
  ) {
    const input = newInput(lifecycle);
    const workflowId = conversationWorkflowId(input.botId, input.sessionId);
    delays.set(workflowId, timing);
    started.push(workflowId);
    const first = await client.workflow.start(conversationWorkflow, {
      taskQueue,
      workflowId,
      args: [input, { status: 'bot' }],
    });
    // Updates go to whichever run is current, as the API's Update-with-Start does.
    const handle = client.workflow.getHandle<typeof conversationWorkflow>(workflowId);
    return { input, workflowId, firstRunId: first.firstExecutionRunId, handle };
  }

  function send(handle: WorkflowHandle<typeof conversationWorkflow>, msg: VisitorMessageInput) {
    return handle.executeUpdate(visitorMessageUpdate, { args: [msg], updateId: msg.messageId });
  }

  /** The runs of a workflow, first to latest, followed through their continue-as-new events. */
  async function runChain(workflowId: string, firstRunId: string) {
    const runs = [];
    let runId: string | undefined = firstRunId;
    while (runId) {
      const run: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
      const [description, history] = await Promise.all([run.describe(), run.fetchHistory()]);
      const events = history.events ?? [];
      const startArgs = arrayFromPayloads(
        defaultPayloadConverter,
        events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads,
      );
      const accepted = events
        .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId)
        .filter((id): id is string => !!id);
      const completed = events
        .map((e) => e.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId)
        .filter((id): id is string => !!id);
      runs.push({ runId, status: description.status.name, startArgs, accepted, completed });
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    return runs;
  }

  /** Server times of the workflow's history events: its idle timers and the updates it accepted. */
  async function eventTimes(handle: WorkflowHandle) {
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      timersStarted: events.filter((e) => e.timerStartedEventAttributes).map((e) => timestampMs(e.eventTime)),
      updatesAccepted: events
        .filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)
        .map((e) => timestampMs(e.eventTime)),
    };
  }

  /** When the workflow's n-th idle window (timer) started, on the server's clock; waits for it to start. */
  async function windowStart(handle: WorkflowHandle, n: number): Promise<number> {
    for (let i = 0; i < 200; i++) {
      const { timersStarted } = await eventTimes(handle);
      if (timersStarted.length >= n) return timersStarted[n - 1];
      await sleep(25);
    }
    throw new Error(`idle window ${n} never started`);
  }

  it('uses production thresholds of 500 updates and 7 days unless the input shortens them', () => {
    expect(UPDATES_BEFORE_CONTINUE_AS_NEW).toBe(500);
    expect(IDLE_END_MS).toBe(7 * 24 * 60 * 60 * 1000);
  });

  it('starts a new conversation with Update-with-Start and reaches it afterwards with a plain update', async () => {
    const input = newInput(undefined);
    const workflowId = conversationWorkflowId(input.botId, input.sessionId);
    started.push(workflowId);
    const conversation = { session_id: input.sessionId, bot_id: input.botId, workspace_id: input.workspaceId };
    const first = visitorMessage('hello');
    apiCalls.length = 0;
    // The request that created the conversation: its workflow cannot be running yet.
    expect(
      await updateConversation(
        api,
        { ...conversation, status: 'bot', created: true },
        visitorMessageUpdate,
        [first],
        first.messageId,
      ),
    ).toEqual({ answer: 'fake answer to hello', runId: first.runId });
    expect(apiCalls).toEqual(['ExecuteMultiOperation']);
    const handle = client.workflow.getHandle(workflowId);
    const run = (await handle.describe()).runId;

    // A conversation that existed: a plain update, so the server tries no start.
    const next = visitorMessage('still there?');
    apiCalls.length = 0;
    expect(
      await updateConversation(api, { ...conversation, status: 'bot' }, visitorMessageUpdate, [next], next.messageId),
    ).toEqual({ answer: 'fake answer to still there?', runId: next.runId });
    expect(apiCalls).toEqual(['UpdateWorkflowExecution']);
    // The same run took both, each once.
    expect((await handle.describe()).runId).toBe(run);
    expect(timesSeen(workflowId, 'answerMessage')).toEqual(once([first.messageId, next.messageId]));
  });

  describe('continue-as-new', () => {
    it('carries the status over and finishes every update in flight at the threshold', async () => {
      const { input, workflowId, firstRunId, handle } = await startConversation(
        { updatesBeforeContinueAsNew: 3, idleEndMs: 600_000 },
        { transitionMs: 300 },
      );
      expect(await handle.executeUpdate(handoffUpdate, { args: [{ handoffEnabled: true, at: Date.now() }] })).toEqual({
        status: 'waiting',
      });

      const first = operatorReply('one');
      expect(await handle.executeUpdate(operatorReplyUpdate, { args: [first], updateId: first.messageId })).toEqual({
        id: first.messageId,
        at: first.at,
        status: 'operator',
      });

      // Four updates at once, each transition slow: the threshold (3) is passed while they are queued.
      const replies = [operatorReply('two'), operatorReply('three')];
      const visitors = [visitorMessage('still there?'), visitorMessage('hello?')];
      const results = await Promise.allSettled([
        ...replies.map((r) => handle.executeUpdate(operatorReplyUpdate, { args: [r], updateId: r.messageId })),
        ...visitors.map((m) => send(handle, m)),
      ]);

      expect(results).toEqual([
        ...replies.map((r) => ({ status: 'fulfilled', value: { id: r.messageId, at: r.at, status: 'operator' } })),
        // A person handles the conversation: the visitor's messages are forwarded, the bot stays silent.
        ...visitors.map(() => ({ status: 'fulfilled', value: { answer: '', handoff: true } })),
      ]);
      const ids = [first, ...replies, ...visitors].map((m) => m.messageId);
      expect(timesSeen(workflowId, 'applyTransition')).toEqual(once(ids));
      expect(callsOf(workflowId, 'answerMessage')).toEqual([]);

      const runs = await runChain(workflowId, firstRunId);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs[0].status).toBe('CONTINUED_AS_NEW');
      expect(runs.at(-1)!.status).toBe('RUNNING');
      expect((await handle.describe()).runId).toBe(runs.at(-1)!.runId);
      // Every update a run accepted was completed by that run (none cut off by the continue-as-new) ...
      for (const run of runs) expect([...run.completed].sort()).toEqual([...run.accepted].sort());
      // ... and each of them exactly once in the whole chain (the handoff's update id is the SDK's own).
      const completed = runs.flatMap((r) => r.completed);
      expect(completed).toHaveLength(6);
      expect(new Set(completed).size).toBe(6);
      expect(completed).toEqual(expect.arrayContaining(ids));
      // The first run passed the threshold and handed its input and status to the next.
      expect(runs[0].completed.length).toBeGreaterThanOrEqual(3);
      expect(runs[1].startArgs).toEqual([input, { status: 'operator' }]);

      // The carried run is the same conversation: an operator holds it, so resolving closes a request.
      expect(await handle.query(statusQuery)).toBe('operator');
      expect(await handle.executeUpdate(resolveUpdate, { args: [{ at: Date.now() }] })).toEqual({
        status: 'bot',
        resolved: true,
      });
      const after = visitorMessage('back to the bot');
      expect(await send(handle, after)).toEqual({ answer: 'fake answer to back to the bot', runId: after.runId });
      const answered = callsOf(workflowId, 'answerMessage');
      expect(answered.map((c) => c.messageIds)).toEqual([[after.messageId]]);
      expect(answered[0].runId).not.toBe(firstRunId);
    });

    it('answers each bot turn of a burst crossing the threshold once, and keeps failures typed', async () => {
      const { workflowId, firstRunId, handle } = await startConversation(
        { updatesBeforeContinueAsNew: 3, idleEndMs: 600_000 },
        { answerMs: 250 },
      );
      const burst = Array.from({ length: 7 }, (_, i) => visitorMessage(`question ${i}`));
      const results = await Promise.allSettled([
        ...burst.map((m) => send(handle, m)),
        // Handoff is off for this bot: a failed update still counts towards the threshold.
        handle.executeUpdate(handoffUpdate, { args: [{ handoffEnabled: false, at: Date.now() }] }),
      ]);

      expect(results.slice(0, burst.length)).toEqual(
        burst.map((m) => ({ status: 'fulfilled', value: { answer: `fake answer to ${m.text}`, runId: m.runId } })),
      );
      const refused = results.at(-1)!;
      expect(refused.status).toBe('rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ cause: { type: 'handoff_disabled' } });
      expect(timesSeen(workflowId, 'answerMessage')).toEqual(once(burst.map((m) => m.messageId)));
      expect(callsOf(workflowId, 'finishRun')).toEqual([]);

      const runs = await runChain(workflowId, firstRunId);
      expect(runs[0].status).toBe('CONTINUED_AS_NEW');
      expect(runs[0].completed.length).toBeGreaterThanOrEqual(3);
      for (const run of runs) expect([...run.completed].sort()).toEqual([...run.accepted].sort());
      expect(runs.flatMap((r) => r.completed)).toHaveLength(burst.length + 1);
      // The status (still the bot's) went along with the input.
      expect(runs[1].startArgs[1]).toEqual({ status: 'bot' });

      const after = visitorMessage('one more');
      expect(await send(handle, after)).toEqual({ answer: 'fake answer to one more', runId: after.runId });
      const last = callsOf(workflowId, 'answerMessage').at(-1)!;
      expect(last.messageIds).toEqual([after.messageId]);
      expect(last.runId).toBe((await handle.describe()).runId);
      expect(last.runId).not.toBe(firstRunId);
    });

    it('loses no message of a steady stream sent as the API does (plain updates to whichever run is current)', async () => {
      const { input, workflowId, firstRunId } = await startConversation(
        { updatesBeforeContinueAsNew: 3, idleEndMs: 600_000 },
        { answerMs: 100 },
      );
      // A message every 150 ms, each answered in 100 ms: runs continue as new while the next messages arrive.
      const stream = Array.from({ length: 15 }, (_, i) => visitorMessage(`message ${i}`));
      const pending = [];
      const conversation = { session_id: input.sessionId, bot_id: input.botId, workspace_id: input.workspaceId };
      for (const msg of stream) {
        pending.push(
          updateConversation(api, { ...conversation, status: 'bot' }, visitorMessageUpdate, [msg], msg.messageId),
        );
        await sleep(150);
      }
      const results = await Promise.allSettled(pending);

      expect(results).toEqual(
        stream.map((m) => ({ status: 'fulfilled', value: { answer: `fake answer to ${m.text}`, runId: m.runId } })),
      );
      expect(timesSeen(workflowId, 'answerMessage')).toEqual(once(stream.map((m) => m.messageId)));
      const runs = await runChain(workflowId, firstRunId);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      for (const run of runs.slice(0, -1)) expect(run.status).toBe('CONTINUED_AS_NEW');
      for (const run of runs) expect([...run.completed].sort()).toEqual([...run.accepted].sort());
      expect([...runs.flatMap((r) => r.completed)].sort()).toEqual(stream.map((m) => m.messageId).sort());
    });
  });

  describe('idle end', () => {
    const idleEndMs = 1_500;

    it('ends a bot conversation after a whole window without activity; its next message starts it again', async () => {
      const { input, workflowId } = await startConversation({ idleEndMs });
      // As the API does: a message to a conversation that exists is a plain update; once the workflow has ended, the
      // same update starts it again (Update-with-Start).
      const row = { session_id: input.sessionId, bot_id: input.botId, workspace_id: input.workspaceId, status: 'bot' };
      const message = (msg: VisitorMessageInput) =>
        updateConversation(api, { ...row, status: 'bot' }, visitorMessageUpdate, [msg], msg.messageId);
      const msg = visitorMessage('hello');
      expect(await message(msg)).toEqual({ answer: 'fake answer to hello', runId: msg.runId });
      const handle = client.workflow.getHandle(workflowId);
      const firstRun = (await handle.describe()).runId;

      await within(handle.result(), 10_000, 'idle end');
      const description = await handle.describe();
      expect(description.runId).toBe(firstRun);
      expect(description.status.name).toBe('COMPLETED');
      // A whole window went by after the message, and the end came with the first window that did.
      const { updatesAccepted } = await eventTimes(handle);
      expect(updatesAccepted).toHaveLength(1);
      const quiet = description.closeTime!.getTime() - updatesAccepted[0];
      expect(quiet).toBeGreaterThanOrEqual(idleEndMs - 50);
      expect(quiet).toBeLessThan(2 * idleEndMs + 1_000);

      // The conversation exists, so the API tries its workflow first; it has ended, so it is started again.
      const next = visitorMessage('are you there?');
      apiCalls.length = 0;
      expect(await message(next)).toEqual({
        answer: 'fake answer to are you there?',
        runId: next.runId,
      });
      expect(apiCalls).toEqual(['UpdateWorkflowExecution', 'ExecuteMultiOperation']);
      const restarted = await handle.describe();
      expect(restarted.runId).not.toBe(firstRun);
      expect(restarted.status.name).toBe('RUNNING');
    });

    it('keeps a conversation handed to a person, however idle, and ends it after it is resolved', async () => {
      const { handle } = await startConversation({ idleEndMs });
      expect(await handle.executeUpdate(handoffUpdate, { args: [{ handoffEnabled: true, at: Date.now() }] })).toEqual({
        status: 'waiting',
      });
      // Any stretch longer than two windows holds a whole idle window.
      await sleep(2 * idleEndMs + 700);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect(await handle.query(statusQuery)).toBe('waiting');

      const reply = operatorReply('How can I help?');
      expect((await handle.executeUpdate(operatorReplyUpdate, { args: [reply] })).status).toBe('operator');
      await sleep(2 * idleEndMs + 700);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect(await handle.query(statusQuery)).toBe('operator');

      expect(await handle.executeUpdate(resolveUpdate, { args: [{ at: Date.now() }] })).toEqual({
        status: 'bot',
        resolved: true,
      });
      await within(handle.result(), 2 * idleEndMs + 3_000, 'idle end after resolving');
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });

    it('postpones the end while messages or operators come within each window', async () => {
      const windowMs = 2_000;
      // The control: left alone from the start, a conversation ends with its first window.
      const control = await startConversation({ idleEndMs: windowMs });
      const { handle } = await startConversation({ idleEndMs: windowMs });

      // Midway through the first window, a visitor message.
      const first = await windowStart(handle, 1);
      await sleep(Math.max(0, first + windowMs / 2 - Date.now()));
      const late = visitorMessage('one last thing');
      expect(await send(handle, late)).toEqual({ answer: 'fake answer to one last thing', runId: late.runId });

      // Midway through the second, an operator opening the thread (a signal, counted as activity too).
      const second = await windowStart(handle, 2);
      expect(second - first).toBeGreaterThanOrEqual(windowMs - 50);
      await sleep(Math.max(0, second + windowMs / 2 - Date.now()));
      await handle.signal(operatorJoinedSignal, { at: Date.now() });

      // The second window has closed too, and the conversation still runs.
      await sleep(Math.max(0, second + windowMs + 600 - Date.now()));
      expect((await handle.describe()).status.name).toBe('RUNNING');

      await within(handle.result(), windowMs + 3_000, 'idle end after the third window');
      const { timersStarted } = await eventTimes(handle);
      expect(timersStarted).toHaveLength(3);
      // It ended with the third window, the first without activity.
      expect((await handle.describe()).closeTime!.getTime() - first).toBeGreaterThanOrEqual(3 * windowMs - 50);

      await within(control.handle.result(), 5_000, 'idle end of the untouched conversation');
      expect((await eventTimes(control.handle)).timersStarted).toHaveLength(1);
      expect((await control.handle.describe()).status.name).toBe('COMPLETED');
    });
  });
});
