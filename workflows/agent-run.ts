import {
  ParentClosePolicy,
  condition,
  proxyLocalActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActionActivities } from '../activities/actions';
import type { AgentRunActivities } from '../activities/agent-run';
import type { TriggerActivities } from '../activities/triggers';
import { NON_RETRYABLE, failure, failureInfo } from './failures';
import { actionApprovalWorkflow } from './action-approval';
import { approvalDecisionSignal, approvalWorkflowId } from './contracts/action-approval';
import {
  type AgentRunInput,
  type GeneratedAnswer,
  type AgentRunResult,
  type ToolCall,
  type ToolSpec,
  type ToolTurn,
} from './contracts/agent-run';
import { type ScheduledRunInput } from './contracts/trigger-health';

/** A run may go back to the model this many times after tool calls; then its last text is the answer. */
const MAX_TOOL_STEPS = 6;

/**
 * One run of an agent woken by a trigger (webhook, schedule, poll, manual): load agent → retrieve knowledge → LLM →
 * persist → charge credits (docs/architecture.md, Workflows: `run/{runId}`). The steps are local activities: no server round
 * trips between them, still durable (a worker that dies mid-run is replaced and the steps re-run, idempotently).
 * The trigger's health workflow hears of every outcome. Chat turns run the same steps inside the conversation.
 */
const bookkeeping = proxyLocalActivities<AgentRunActivities & ActionActivities & TriggerActivities>({
  // Database reads and writes (and a poll's fetch); retried with backoff so a brief outage loses nothing.
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    maximumInterval: '5 seconds',
    maximumAttempts: 20,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

function llmActivity(timeoutMs: number) {
  return proxyLocalActivities<AgentRunActivities>({
    // The turn's whole budget, retries included.
    startToCloseTimeout: timeoutMs,
    scheduleToCloseTimeout: timeoutMs,
    // LLM failures are classified non-retryable in the activity; anything else is retried once within the budget.
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: NON_RETRYABLE },
  });
}

export async function agentRunWorkflow(request: AgentRunInput | ScheduledRunInput): Promise<AgentRunResult> {
  // Approvals may arrive at any time; they are kept until the run asks for them.
  const decisions = new Map<string, boolean>();
  setHandler(approvalDecisionSignal, ({ approvalId, approved }) => {
    decisions.set(approvalId, approved);
  });

  // A Temporal Schedule starts runs without an id or input: the run id is drawn here (uuid4 is deterministic in a
  // workflow) and the input decided by the trigger's current settings.
  let input: AgentRunInput;
  if ('runId' in request) {
    input = request;
  } else {
    const runId = `run_${uuid4().replace(/-/g, '').slice(0, 20)}`;
    const begin = await bookkeeping.beginTriggerRun({ triggerId: request.triggerId }).catch(async (err) => {
      // The poll itself failed: a failed run (it counts towards pausing the trigger), recorded as such.
      const { type, message } = failureInfo(err, { fallbackMessage: 'The run failed' });
      await bookkeeping.recordSkippedOrFailedRun({
        ...request,
        runId,
        status: 'failed',
        errorCode: type,
        error: message,
      });
      await bookkeeping.reportTriggerOutcome({ triggerId: request.triggerId, runId, ok: false });
      throw failure(type, message);
    });
    if (begin.skip) {
      upsertSearchAttributes({ RunStatus: ['skipped'] });
      return { runId, answer: '', skipped: begin.skip };
    }
    input = { ...request, runId, input: begin.input!, withTools: true, ownerContext: true, role: 'admin' };
  }

  upsertSearchAttributes({ RunStatus: ['running'] });
  let answer: GeneratedAnswer;
  // The run's model's price relative to the default, read with the agent at the start (credits are weighted by it).
  let creditWeight: number;
  // What the run read: its passages, and what a follow-up was searched with (kept with the run).
  let read: Pick<Awaited<ReturnType<AgentRunActivities['startRun']>>, 'passages' | 'searchedWith'> | undefined;
  try {
    const ctx = await bookkeeping.startRun(input);
    creditWeight = ctx.creditWeight ?? 1;
    read = { passages: ctx.passages, searchedWith: ctx.searchedWith };
    const transcript: ToolTurn[] = [];
    // A follow-up's standalone question (written in startRun) is the run's first use of the model.
    let promptTokens = ctx.searchUsage?.promptTokens ?? 0;
    let completionTokens = ctx.searchUsage?.completionTokens ?? 0;
    for (let step = 0; ; step++) {
      const out = await llmActivity(input.turnTimeoutMs).generateAnswer(input, ctx, transcript);
      promptTokens += out.promptTokens;
      completionTokens += out.completionTokens;
      if (!out.toolCalls?.length || step >= MAX_TOOL_STEPS) {
        answer = { ...out, promptTokens, completionTokens };
        break;
      }
      transcript.push({ role: 'assistant', text: out.text, toolCalls: out.toolCalls });
      for (const call of out.toolCalls) {
        transcript.push({
          role: 'tool',
          toolCallId: call.id,
          content: await runTool(input, ctx.tools, call, decisions),
        });
      }
    }
  } catch (err) {
    // A run that used up its turn budget is the backend's slowness: llm_overloaded, as the contract names it.
    const { type, message, retryAfter } = failureInfo(err, {
      timeout: { type: 'llm_overloaded', message: 'The AI backend did not answer in time' },
      fallbackMessage: 'The run failed',
    });
    const hint = retryAfter ?? (type === 'llm_overloaded' ? 10 : undefined);
    // A chat turn (with tools) ends with this failure: announced with its record, as the conversation returns it.
    const turnOutcome =
      input.triggerKind === 'message' && input.sessionId
        ? {
            answer: '',
            runId: input.runId,
            error: { type, message, ...(hint !== undefined ? { retryAfter: hint } : {}) },
          }
        : undefined;
    // A run refused for lack of credits was already recorded as such by startRun.
    if (type !== 'no_credits')
      await bookkeeping.finishRun({ run: input, status: 'failed', errorCode: type, error: message, read, turnOutcome });
    if (input.triggerId)
      await bookkeeping.reportTriggerOutcome({ triggerId: input.triggerId, runId: input.runId, ok: false });
    upsertSearchAttributes({ RunStatus: ['failed'] });
    // Failing the workflow shows the run as failed in the Temporal UI; callers read the type and details.
    throw failure(type, message, [{ retryAfter: hint }]);
  }
  await bookkeeping.finishRun({ run: input, status: 'done', answer, creditWeight, read });
  if (input.triggerId)
    await bookkeeping.reportTriggerOutcome({ triggerId: input.triggerId, runId: input.runId, ok: true });
  upsertSearchAttributes({ RunStatus: ['done'] });
  return {
    runId: input.runId,
    answer: answer.text,
    ...(answer.sources ? { sources: answer.sources } : {}),
    ...(answer.unanswered ? { unanswered: answer.unanswered } : {}),
  };
}

/**
 * One tool call. An action that requires approval waits, durably, for the owner's decision through the dashboard
 * (a worker restart loses nothing: the wait is workflow state). In a chat turn the visitor cannot wait that long:
 * the approval gets a workflow of its own, and the model is told the action will run once approved.
 */
async function runTool(
  input: AgentRunInput,
  tools: ToolSpec[],
  call: ToolCall,
  decisions: Map<string, boolean>,
): Promise<string> {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return `error: there is no tool named "${call.name}"`;
  if (!tool.requiresApproval) return bookkeeping.executeTool({ botId: input.botId, tool, arguments: call.arguments });

  const approvalId = `apr_${uuid4().replace(/-/g, '').slice(0, 20)}`;
  if (input.triggerKind === 'message' && input.sessionId) {
    const workflowId = approvalWorkflowId(approvalId);
    await bookkeeping.requestApproval({
      approvalId,
      runId: input.runId,
      botId: input.botId,
      tool,
      arguments: call.arguments,
      workflowId,
    });
    await startChild(actionApprovalWorkflow, {
      workflowId,
      args: [{ approvalId, botId: input.botId, sessionId: input.sessionId, tool, arguments: call.arguments }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      searchAttributes: { BotId: [input.botId] },
    });
    return `The owner must approve "${tool.name}" before it runs; the request was sent. Tell the visitor it will be done once approved.`;
  }
  await bookkeeping.requestApproval({
    approvalId,
    runId: input.runId,
    botId: input.botId,
    tool,
    arguments: call.arguments,
    workflowId: workflowInfo().workflowId,
  });
  upsertSearchAttributes({ RunStatus: ['waiting_approval'] });
  await condition(() => decisions.has(approvalId));
  upsertSearchAttributes({ RunStatus: ['running'] });
  if (!decisions.get(approvalId)) return `The owner rejected "${tool.name}". Do not try it again in this run.`;
  return bookkeeping.executeTool({ botId: input.botId, tool, arguments: call.arguments });
}
