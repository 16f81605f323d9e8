import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { ActionActivities } from '../activities/actions';
import { approvalDecisionSignal } from './contracts/action-approval';
import { type ToolSpec } from './contracts/agent-run';

/** An approval the owner never decides expires; the visitor is told. */
const APPROVAL_EXPIRES = '7 days';

const { executeTool, postActionOutcome } = proxyLocalActivities<ActionActivities>({
  // The action's HTTP call has its own 15-second limit; retried with backoff only for storage trouble.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * An action a chat turn asked for that needs the owner's approval (`approval/{id}`): waits for the decision, runs
 * the action if approved, and tells the visitor in the conversation either way.
 */
export async function actionApprovalWorkflow(input: {
  approvalId: string;
  botId: string;
  sessionId: string;
  tool: ToolSpec;
  arguments: string;
}): Promise<{ approved: boolean | null }> {
  let approved: boolean | undefined;
  setHandler(approvalDecisionSignal, (d) => {
    if (d.approvalId === input.approvalId) approved = d.approved;
  });
  const decided = await condition(() => approved !== undefined, APPROVAL_EXPIRES);
  const messageId = `msg_${input.approvalId}`;
  if (!decided || !approved) {
    await postActionOutcome({
      ...input,
      messageId,
      text: decided
        ? `The request "${input.tool.name}" was declined.`
        : `The request "${input.tool.name}" expired without a decision.`,
    });
    return { approved: decided ? false : null };
  }
  const result = await executeTool({ botId: input.botId, tool: input.tool, arguments: input.arguments });
  const ok = /^HTTP 2\d\d/.test(result);
  await postActionOutcome({
    ...input,
    messageId,
    text: ok
      ? `Done: "${input.tool.name}" was approved and carried out.`
      : `"${input.tool.name}" was approved but failed: ${result.slice(0, 300)}`,
  });
  return { approved: true };
}
