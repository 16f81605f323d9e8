import { WorkflowNotFoundError } from '@temporalio/client';
import { runWorkflowId } from '../../workflows/contracts/agent-run';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';
import { withTransaction } from '../db';
import type { Temporal } from '../temporal';
import type { ConversationDeps } from './deps';

/**
 * Deletes everything stored about one visitor (by `user_token`/confirmed user, by session, or both): conversations,
 * messages, runs, webhook records, and the workflow histories that hold their texts
 * (docs/decisions/018-visitor-erase.md).
 */
export async function eraseVisitor(
  deps: ConversationDeps,
  botId: string,
  who: { user_token?: string; session_id?: string },
): Promise<{ conversations: number }> {
  const sessions = await deps.db.query<{ session_id: string }>(
    `SELECT session_id FROM conversations WHERE bot_id = $1 AND (session_id = $2 OR visitor_user = $3)`,
    [botId, who.session_id ?? null, who.user_token ?? null],
  );
  const ids = sessions.rows.map((r) => r.session_id);
  const runs = await deps.db.query<{ id: string }>(`SELECT id FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`, [
    botId,
    ids,
  ]);
  const runIds = runs.rows.map((r) => r.id);
  const approvals = await deps.db.query<{ id: string; workflow_id: string }>(
    `SELECT id, workflow_id FROM action_approvals WHERE bot_id = $1 AND run_id = ANY($2)`,
    [botId, runIds],
  );
  // Workflow histories hold message texts and action arguments too: every run of each workflow id (a conversation
  // continues as new, so it has several) is deleted before the rows that point at them.
  const workflowIds = [
    ...ids.map((sid) => conversationWorkflowId(botId, sid)),
    ...runIds.map((id) => runWorkflowId(id)),
    ...approvals.rows.map((a) => a.workflow_id).filter((id) => id.startsWith('approval/')),
  ];
  for (const workflowId of workflowIds) await deleteWorkflowHistories(deps.temporal, workflowId);
  // Attached images leave their store first; their rows go with the conversations.
  await deps.media.deleteForSessions(botId, ids);
  const approvalIds = approvals.rows.map((a) => a.id);
  await withTransaction(deps.db, async (tx) => {
    // Notifications quote an approval's arguments: they go with it.
    await tx.query(`DELETE FROM notifications WHERE bot_id = $1 AND id = ANY($2)`, [
      botId,
      approvalIds.map((id) => `ntf_${id}`),
    ]);
    await tx.query(`DELETE FROM action_approvals WHERE bot_id = $1 AND id = ANY($2)`, [botId, approvalIds]);
    await tx.query(`DELETE FROM webhook_deliveries WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
    await tx.query(`DELETE FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
    // Stored answers of idempotent requests repeat the visitor's words: those of this bot's keys go too.
    await tx.query(
      `DELETE FROM idempotency_keys WHERE session_id = ANY($2)
          AND (api_key_id IN (SELECT id FROM api_keys WHERE bot_id = $1) OR api_key_id = 'public:' || $1)`,
      [botId, ids],
    );
    await tx.query(`DELETE FROM conversations WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
  });
  return { conversations: ids.length };
}

/**
 * Deletes every run of a workflow id from Temporal (visibility lists the runs a continue-as-new left behind; the
 * latest run is deleted by id as well, in case visibility has not caught up). Not found is fine.
 */
async function deleteWorkflowHistories(temporal: Temporal, workflowId: string): Promise<void> {
  const runIds = new Set<string | undefined>([undefined]);
  const quoted = `'${workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = ${quoted}` })) {
    runIds.add(execution.runId);
  }
  for (const runId of runIds) {
    try {
      await temporal.connection.workflowService.deleteWorkflowExecution({
        namespace: temporal.namespace,
        workflowExecution: { workflowId, ...(runId ? { runId } : {}) },
      });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) && (err as { code?: number }).code !== 5 /* NOT_FOUND */) throw err;
    }
  }
}
