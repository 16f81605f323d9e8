/**
 * The owner's check of an agent (docs/decisions/155-owner-check.md): every test question through the chat's retrieval.
 * The contract between the checks service (client side), the workflow and its activities: nothing here may import
 * Node built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export interface KnowledgeCheckInput {
  botId: string;
  workspaceId: string;
  /** The run's id (`chk_…`): its `check_runs` row, written with its questions before the workflow starts. */
  runId: string;
}

/** Questions one activity checks: a few seconds of retrieval (each question may wait up to 5 s for its embedding). */
export const CHECK_BATCH = 10;

export interface CheckBatchResult {
  /** Questions of the run still unchecked after this batch; 0 ends the run. */
  remaining: number;
}

export interface KnowledgeCheckSummary {
  status: 'done' | 'gone';
  total: number;
  found: number;
}

/**
 * One workflow per run, under the run's own id, so the Temporal UI finds a run from the dashboard's. One run at a
 * time per agent is the `check_runs` row's (a partial unique index), not the id's.
 */
export function knowledgeCheckWorkflowId(botId: string, runId: string): string {
  return `knowledge-check/${botId}/${runId}`;
}

export function knowledgeCheckSearchAttributes(input: Pick<KnowledgeCheckInput, 'botId' | 'workspaceId'>) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId] };
}
