import { WorkflowNotFoundError } from '@temporalio/client';
import { approvalDecisionSignal } from '../../workflows/contracts/action-approval';
import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import type { Temporal } from '../temporal';

export interface ActionServiceDeps {
  db: Db;
  temporal: Temporal;
}

export interface ActionSettings {
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  parameters: Record<string, unknown>;
  admin_only: boolean;
  requires_approval: boolean;
}

const ACTION_COLUMNS = 'id, name, description, method, url, parameters, admin_only, requires_approval';

/**
 * Agent actions (HTTP tools a run may call) and the owner's approvals of the calls that need one. Deciding an
 * approval records it, then signals the workflow waiting for it (the run itself, or a chat turn's `approval/{id}`).
 */
export function createActionService(deps: ActionServiceDeps) {
  /** Signals the decision to the workflow waiting for it and records that it arrived (a closed workflow: nothing waits). */
  async function deliverDecision(workflowId: string, approvalId: string, approved: boolean): Promise<void> {
    try {
      await deps.temporal.client.workflow
        .getHandle(workflowId)
        .signal(approvalDecisionSignal, { approvalId, approved });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    await deps.db.query(`UPDATE action_approvals SET delivered_at = now() WHERE id = $1`, [approvalId]);
  }

  return {
    async create(botId: string, a: ActionSettings): Promise<ActionSettings & { id: string }> {
      const res = await deps.db.query<ActionSettings & { id: string }>(
        `INSERT INTO bot_actions (id, bot_id, name, description, method, url, parameters, admin_only, requires_approval)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (bot_id, name) DO NOTHING
         RETURNING ${ACTION_COLUMNS}`,
        [
          newId('act'),
          botId,
          a.name,
          a.description,
          a.method,
          a.url,
          JSON.stringify(a.parameters),
          a.admin_only,
          a.requires_approval,
        ],
      );
      if (!res.rows[0]) throw errors.conflict(`An action named "${a.name}" exists already`);
      return res.rows[0];
    },

    async list(botId: string): Promise<(ActionSettings & { id: string })[]> {
      const res = await deps.db.query<ActionSettings & { id: string }>(
        `SELECT ${ACTION_COLUMNS} FROM bot_actions WHERE bot_id = $1 ORDER BY name`,
        [botId],
      );
      return res.rows;
    },

    async remove(botId: string, actionId: string): Promise<{ status: 'deleted'; id: string }> {
      const res = await deps.db.query(`DELETE FROM bot_actions WHERE bot_id = $1 AND id = $2`, [botId, actionId]);
      if (!res.rowCount) throw errors.notFound('No such action');
      return { status: 'deleted', id: actionId };
    },

    /**
     * Delivers decisions recorded but not delivered (the signal failed, or the process died between the two writes),
     * older than a minute; the maintenance workflow calls it, so every decision reaches its workflow.
     */
    async redeliverStale(): Promise<number> {
      const res = await deps.db.query<{ id: string; workflow_id: string; status: string }>(
        `SELECT id, workflow_id, status FROM action_approvals
          WHERE status <> 'pending' AND delivered_at IS NULL AND decided_at < now() - interval '1 minute'
          ORDER BY decided_at LIMIT 100`,
      );
      for (const a of res.rows) await deliverDecision(a.workflow_id, a.id, a.status === 'approved');
      return res.rows.length;
    },

    /** Action calls waiting for approval and recent decisions, newest first. */
    async listApprovals(botId: string) {
      const res = await deps.db.query<{
        id: string;
        run_id: string;
        action: string;
        arguments: unknown;
        status: string;
        created_ms: number;
      }>(
        `SELECT p.id, p.run_id, a.name AS action, p.arguments, p.status, (extract(epoch FROM p.created_at) * 1000)::bigint AS created_ms
           FROM action_approvals p JOIN bot_actions a ON a.id = p.action_id
          WHERE p.bot_id = $1 ORDER BY p.created_at DESC LIMIT 100`,
        [botId],
      );
      return res.rows.map(({ created_ms, ...r }) => ({ ...r, created_at: Number(created_ms) }));
    },

    /**
     * Approves or rejects a waiting call (only a signed-in user can; never a builder key). The decision is recorded
     * first, then delivered; repeating the same decision delivers it again (idempotent), a different one is 409.
     */
    async decide(
      botId: string,
      approvalId: string,
      approved: boolean,
      userId: string,
    ): Promise<{ id: string; status: 'approved' | 'rejected' }> {
      const status = approved ? 'approved' : 'rejected';
      const res = await deps.db.query<{ workflow_id: string }>(
        `UPDATE action_approvals SET status = $3, decided_by = $4, decided_at = now()
          WHERE id = $1 AND bot_id = $2 AND (status = 'pending' OR status = $3) RETURNING workflow_id`,
        [approvalId, botId, status, userId],
      );
      if (!res.rows[0]) {
        const exists = await deps.db.query(`SELECT status FROM action_approvals WHERE id = $1 AND bot_id = $2`, [
          approvalId,
          botId,
        ]);
        if (!exists.rows[0]) throw errors.notFound('No such approval');
        throw new ApiError('conflict', `This approval was already ${exists.rows[0].status}`);
      }
      await deliverDecision(res.rows[0].workflow_id, approvalId, approved);
      return { id: approvalId, status };
    },
  };
}

export type ActionService = ReturnType<typeof createActionService>;
