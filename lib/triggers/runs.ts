import { WithStartWorkflowOperation, WorkflowFailedError } from '@temporalio/client';
import { createHmac } from 'node:crypto';
import { agentRunWorkflow } from '../../workflows/agent-run';
import { type AgentRunInput, agentRunSearchAttributes, runWorkflowId } from '../../workflows/contracts/agent-run';
import { runFinishedUpdate, triggerHealthWorkflowId } from '../../workflows/contracts/trigger-health';
import { triggerHealthWorkflow } from '../../workflows/trigger-health';
import { ApiError, errors, isUnavailableError } from '../errors';
import { newId } from '../ids';
import { constantTimeEqual } from '../keys';
import { LIMITS } from '../limits';
import { waitThroughOutage } from '../temporal';
import type { TriggerDeps } from './deps';
import { type TriggerRow, composeRunInput, findTrigger, signalText } from './store';
import { loadTrigger } from './views';

/** How a run a trigger started ended for its caller: acknowledged at once, or waited for (contract, Incoming trigger webhook). */
export type RunStarted = { mode: 'ack'; run_id: string } | { mode: 'wait'; run_id: string; answer: string };

/** Starts a run of a trigger; with `wait`, waits for its result (contract, Incoming trigger webhook table). */
async function startRun(
  deps: TriggerDeps,
  t: TriggerRow,
  kind: 'webhook' | 'manual',
  body: string,
): Promise<RunStarted> {
  const runId = newId('run');
  // Spec: in wait mode the caller reads the answer, so the agent sees none of the owner's private data.
  const callerReads = kind === 'webhook' && t.mode === 'wait';
  const input: AgentRunInput = {
    runId,
    botId: t.bot_id,
    workspaceId: t.workspace_id,
    triggerKind: kind,
    triggerId: t.id,
    input: composeRunInput(t.task, body),
    turnTimeoutMs: deps.turnTimeoutMs,
    withTools: true,
    ownerContext: !callerReads,
    role: callerReads ? 'visitor' : 'admin',
  };
  const handle = await deps.temporal.client.workflow.start(agentRunWorkflow, {
    workflowId: runWorkflowId(runId),
    taskQueue: deps.temporal.taskQueue,
    args: [input],
    searchAttributes: agentRunSearchAttributes(input),
  });
  if (t.mode === 'ack') return { mode: 'ack', run_id: runId };
  const waitMs = deps.turnTimeoutMs + 30_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      // The run goes on in its worker while Temporal is away: its result is asked for again until the wait ends.
      waitThroughOutage(() => handle.result(), Date.now() + waitMs),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), waitMs);
      }),
    ]);
    return { mode: 'wait', run_id: runId, answer: result.answer };
  } catch (err) {
    // Temporal still out of reach at the end: 503, as for any request that needs it (the run may yet finish).
    if (isUnavailableError(err)) throw err;
    const reason =
      err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : 'the run did not finish in time';
    throw new ApiError('run_failed', `The run failed: ${reason}. See the run log.`, { run_id: runId });
  } finally {
    clearTimeout(timer);
  }
}

/** A manual start: one run now, answered as the trigger's webhook would be. */
export async function runNow(
  deps: TriggerDeps,
  botId: string,
  triggerId: string,
  body: string | undefined,
): Promise<RunStarted> {
  const t = await loadTrigger(deps, botId, triggerId);
  if (!t.enabled) throw new ApiError('trigger_disabled', 'The trigger is off; turn it on first');
  return startRun(deps, t, 'manual', body ?? 'Manual start from the dashboard');
}

/**
 * `POST /v1/hooks/{tid}`: the signature is HMAC-SHA256 of the raw body with the trigger's secret, compared in
 * constant time; then 404 for an unknown or deleted trigger and 409 for a disabled one (contract, Incoming trigger webhook table).
 */
export async function receiveHook(
  deps: TriggerDeps,
  triggerId: string,
  rawBody: Buffer,
  signature: string,
): Promise<RunStarted> {
  const t = await findTrigger(deps.db, triggerId);
  if (!t || t.kind !== 'webhook' || !t.secret_sealed) throw errors.notFound('No such trigger');
  const expected = `sha256=${createHmac('sha256', deps.secrets.open(t.secret_sealed)).update(rawBody).digest('hex')}`;
  if (!constantTimeEqual(signature, expected))
    throw new ApiError('invalid_signature', 'Missing or invalid X-Hook-Signature');
  if (!t.enabled) {
    throw new ApiError(
      'trigger_disabled',
      t.disabled_reason === 'failures' ? 'The trigger was paused after failed runs' : 'The trigger is turned off',
    );
  }
  return startRun(deps, t, 'webhook', signalText(rawBody));
}

/**
 * Tells the trigger's health workflow how a run ended (starting it on the trigger's first run) and waits until
 * the report is counted: a fifth failure's pause is recorded before the failing run ends (contract, Trigger states).
 * The update id is the run's, so a retried report is counted once.
 */
export async function reportRunOutcome(
  deps: TriggerDeps,
  input: { triggerId: string; runId: string; ok: boolean },
): Promise<void> {
  await deps.temporal.client.workflow.executeUpdateWithStart(runFinishedUpdate, {
    args: [{ runId: input.runId, ok: input.ok, pauseAfter: LIMITS.triggerPauseAfterFailures }],
    updateId: `report/${input.runId}`,
    startWorkflowOperation: new WithStartWorkflowOperation(triggerHealthWorkflow, {
      workflowId: triggerHealthWorkflowId(input.triggerId),
      taskQueue: deps.temporal.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ triggerId: input.triggerId, failures: 0 }],
    }),
  });
}
