import {
  ApplicationFailure,
  proxyLocalActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AgentRunActivities, GeneratedAnswer } from '../activities/agent-run';
import { applicationFailureIn, isTimeout } from './failures';
import type { AgentRunInput, AgentRunResult } from './messages';

/**
 * One run of an agent: load agent → retrieve knowledge → LLM → persist (DESIGN.md, Workflows). The steps are
 * local activities: a chat turn is the path users feel, and local activities cost no server round trips between
 * steps while keeping the run durable (a worker that dies mid-run is replaced and the steps re-run, idempotently).
 */
const bookkeeping = proxyLocalActivities<AgentRunActivities>({
  // Database reads and writes; retried with backoff so a brief Postgres outage does not lose the answer.
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 20 },
});

function llmActivity(timeoutMs: number) {
  return proxyLocalActivities<AgentRunActivities>({
    // The turn's whole budget, retries included: past it the visitor is told the backend is busy.
    startToCloseTimeout: timeoutMs,
    scheduleToCloseTimeout: timeoutMs,
    // LLM failures are classified non-retryable in the activity (the waiting visitor gets a 503 with a code);
    // anything else (a database hiccup while streaming) is retried once within the budget.
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: ['llm_unavailable', 'llm_overloaded'] },
  });
}

export async function agentRunWorkflow(input: AgentRunInput): Promise<AgentRunResult> {
  upsertSearchAttributes({ RunStatus: ['running'] });
  const ctx = await bookkeeping.startRun(input);
  let answer: GeneratedAnswer;
  try {
    answer = await llmActivity(input.turnTimeoutMs).generateAnswer(input, ctx);
  } catch (err) {
    const cause = applicationFailureIn(err);
    // A model that did not answer within the turn is "busy" to the visitor (spec: turn timeout → llm_overloaded).
    const code = cause?.type === 'llm_unavailable' || cause?.type === 'llm_overloaded' ? cause.type : isTimeout(err) ? 'llm_overloaded' : 'internal_error';
    const message = cause?.message ?? (code === 'llm_overloaded' ? 'The AI backend did not answer in time' : 'The run failed');
    await bookkeeping.finishRun({ run: input, status: 'failed', errorCode: code, error: message });
    upsertSearchAttributes({ RunStatus: ['failed'] });
    // Failing the workflow makes the run show as failed in the Temporal UI; the parent reads type and details.
    throw ApplicationFailure.create({ message, type: code, nonRetryable: true, details: cause?.details?.length ? cause.details : [{ retryAfter: code === 'llm_overloaded' ? 10 : undefined }] });
  }
  await bookkeeping.finishRun({ run: input, status: 'done', answer });
  upsertSearchAttributes({ RunStatus: ['done'] });
  return { runId: input.runId, answer: answer.text };
}

export function agentRunSearchAttributes(input: AgentRunInput) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId], TriggerKind: [input.triggerKind], RunStatus: ['running'] };
}
