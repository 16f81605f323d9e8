import { withTransaction } from '../db';
import { errors } from '../errors';
import { grantCredits } from '../credits/service';
import type { BillingDeps } from './deps';
import { PLANS, type Plan, isPlanId, planOf } from './plans';
import { type Usage, usage } from './usage';

/**
 * Puts a workspace on a plan: its monthly conversation quota becomes the plan's (at once), and its included credits
 * are granted from the next month (this month's were granted already).
 */
export async function setPlan({ db }: BillingDeps, workspaceId: string, planId: string): Promise<Plan> {
  if (!isPlanId(planId)) throw errors.badRequest(`Unknown plan ${planId}: one of ${PLANS.map((p) => p.id).join(', ')}`);
  const plan = planOf(planId);
  const res = await db.query(`UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3 WHERE id = $1`, [
    workspaceId,
    plan.id,
    plan.monthly_conversations,
  ]);
  if (!res.rowCount) throw errors.notFound(`No workspace with id ${workspaceId}`);
  return plan;
}

/**
 * Records a top-up: extra conversations for the current month (a used-up quota opens again at once: the next
 * conversation's check counts them), or credits (added to the balance and the ledger).
 */
export async function topUp(
  deps: BillingDeps,
  workspaceId: string,
  topUp: { kind: 'conversations' | 'credits'; amount: number; note?: string },
): Promise<Usage> {
  await withTransaction(deps.db, async (tx) => {
    const ws = await tx.query(`SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
    if (!ws.rowCount) throw errors.notFound(`No workspace with id ${workspaceId}`);
    await tx.query(
      `INSERT INTO billing_topups (workspace_id, kind, amount, period_start, note)
       VALUES ($1, $2, $3, date_trunc('month', now())::date, $4)`,
      [workspaceId, topUp.kind, topUp.amount, topUp.note ?? null],
    );
    if (topUp.kind === 'credits') {
      await grantCredits(tx, workspaceId, topUp.amount, `Top-up${topUp.note ? `: ${topUp.note}` : ''}`);
    }
  });
  return usage(deps, workspaceId, 1);
}
