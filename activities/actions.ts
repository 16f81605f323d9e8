import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import { executeTool, postActionOutcome, requestApproval } from '../lib/actions/tools';
import type { ToolSpec } from '../workflows/contracts/agent-run';

export interface ActionDeps {
  db: Db;
  /** The SSRF-safe client: every action's HTTP call goes through it. */
  fetch: SafeFetch;
}

/** The tool side of a run: calling an action or the agent state, and asking the owner's approval. */
export function createActionActivities(deps: ActionDeps) {
  return {
    /** One tool call; the result (or the failure, in words) goes back to the model. */
    executeTool(input: { botId: string; tool: ToolSpec; arguments: string }): Promise<string> {
      return executeTool(deps, input);
    },

    /** Records an action call waiting for the owner, and notifies the owner. Idempotent on its id. */
    requestApproval(input: {
      approvalId: string;
      runId: string;
      botId: string;
      tool: ToolSpec;
      arguments: string;
      workflowId: string;
    }): Promise<void> {
      return requestApproval(deps.db, input);
    },

    /** After an approved action ran for a chat turn: its outcome joins the conversation as a bot message. */
    postActionOutcome(input: { sessionId: string; botId: string; messageId: string; text: string }): Promise<void> {
      return postActionOutcome(deps.db, input);
    },
  };
}

export type ActionActivities = ReturnType<typeof createActionActivities>;
