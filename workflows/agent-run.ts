import { ApplicationFailure, proxyLocalActivities, upsertSearchAttributes, uuid4 } from '@temporalio/workflow';
import type { AgentRunActivities, GeneratedAnswer } from '../activities/agent-run';
import type { TriggerActivities } from '../activities/triggers';
import { applicationFailureIn, isTimeout } from './failures';
import type { AgentRunInput, AgentRunResult, ScheduledRunInput } from './messages';

/**
 * One run of an agent woken by a trigger (webhook, schedule, poll, manual): load agent → retrieve knowledge → LLM →
 * persist → charge credits (DESIGN.md, Workflows: `run/{runId}`). The steps are local activities: no server round
 * trips between them, still durable (a worker that dies mid-run is replaced and the steps re-run, idempotently).
 * The trigger's health workflow hears of every outcome. Chat turns run the same steps inside the conversation.
 */
const bookkeeping = proxyLocalActivities<AgentRunActivities & TriggerActivities>({
  // Database reads and writes (and a poll's fetch); retried with backoff so a brief outage loses nothing.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 20, nonRetryableErrorTypes: ['no_credits', 'poll_failed'] },
});

function llmActivity(timeoutMs: number) {
  return proxyLocalActivities<AgentRunActivities>({
    // The turn's whole budget, retries included.
    startToCloseTimeout: timeoutMs,
    scheduleToCloseTimeout: timeoutMs,
    // LLM failures are classified non-retryable in the activity; anything else is retried once within the budget.
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: ['llm_unavailable', 'llm_overloaded'] },
  });
}

const RUN_FAILURE_TYPES = ['llm_unavailable', 'llm_overloaded', 'no_credits', 'poll_failed'];

export async function agentRunWorkflow(request: AgentRunInput | ScheduledRunInput): Promise<AgentRunResult> {
  // A Temporal Schedule starts runs without an id or input: the run id is drawn here (uuid4 is deterministic in a
  // workflow) and the input decided by the trigger's current settings.
  let input: AgentRunInput;
  if ('runId' in request) {
    input = request;
  } else {
    const runId = `run_${uuid4().replace(/-/g, '').slice(0, 20)}`;
    const begin = await bookkeeping.beginTriggerRun({ triggerId: request.triggerId }).catch(async (err) => {
      // The poll itself failed: a failed run (it counts towards pausing the trigger), recorded as such.
      const cause = applicationFailureIn(err);
      await bookkeeping.recordSkippedOrFailedRun({ ...request, runId, status: 'failed', errorCode: cause?.type ?? 'internal_error', error: cause?.message ?? String(err) });
      await bookkeeping.reportTriggerOutcome({ triggerId: request.triggerId, runId, ok: false });
      throw ApplicationFailure.create({ message: cause?.message ?? 'The run failed', type: cause?.type ?? 'internal_error', nonRetryable: true });
    });
    if (begin.skip) {
      upsertSearchAttributes({ RunStatus: ['skipped'] });
      return { runId, answer: '', skipped: begin.skip };
    }
    input = { ...request, runId, input: begin.input! };
  }

  upsertSearchAttributes({ RunStatus: ['running'] });
  let answer: GeneratedAnswer;
  try {
    const ctx = await bookkeeping.startRun(input);
    answer = await llmActivity(input.turnTimeoutMs).generateAnswer(input, ctx);
  } catch (err) {
    const cause = applicationFailureIn(err);
    const code = cause && RUN_FAILURE_TYPES.includes(cause.type ?? '') ? cause.type! : isTimeout(err) ? 'llm_overloaded' : 'internal_error';
    const message = cause?.message ?? (code === 'llm_overloaded' ? 'The AI backend did not answer in time' : 'The run failed');
    if (code !== 'no_credits') await bookkeeping.finishRun({ run: input, status: 'failed', errorCode: code, error: message });
    if (input.triggerId) await bookkeeping.reportTriggerOutcome({ triggerId: input.triggerId, runId: input.runId, ok: false });
    upsertSearchAttributes({ RunStatus: ['failed'] });
    // Failing the workflow shows the run as failed in the Temporal UI; callers read the type and details.
    throw ApplicationFailure.create({
      message,
      type: code,
      nonRetryable: true,
      details: cause?.details?.length ? cause.details : [{ retryAfter: code === 'llm_overloaded' ? 10 : undefined }],
    });
  }
  await bookkeeping.finishRun({ run: input, status: 'done', answer });
  if (input.triggerId) await bookkeeping.reportTriggerOutcome({ triggerId: input.triggerId, runId: input.runId, ok: true });
  upsertSearchAttributes({ RunStatus: ['done'] });
  return { runId: input.runId, answer: answer.text };
}

export function agentRunSearchAttributes(input: { botId: string; workspaceId: string; triggerKind: string }) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId], TriggerKind: [input.triggerKind], RunStatus: ['running'] };
}
