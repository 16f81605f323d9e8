import { type Db, type Queryable, withTransaction } from '../db';
import { errors } from '../errors';

/**
 * Credits (README, Credits): a workspace's balance and its ledger. Runs are charged where they finish, in the
 * run's own statement (lib/runs/bookkeeping.ts), so a charge and the run's outcome commit together.
 */

/** Adds credits to a workspace: one ledger row and the balance, in the caller's transaction. */
export async function grantCredits(
  tx: Queryable,
  workspaceId: string,
  amount: number,
  reason: string,
): Promise<number> {
  const res = await tx.query<{ credit_balance: number }>(
    `UPDATE workspaces SET credit_balance = credit_balance + $2 WHERE id = $1 RETURNING credit_balance`,
    [workspaceId, amount],
  );
  if (!res.rows[0]) throw errors.notFound(`No workspace with id ${workspaceId}`);
  await tx.query(`INSERT INTO credit_ledger (workspace_id, amount, reason) VALUES ($1, $2, $3)`, [
    workspaceId,
    amount,
    reason,
  ]);
  return res.rows[0].credit_balance;
}

export function createCreditService(deps: { db: Db }) {
  return {
    /** Grants credits (an operator's top-up); returns the new balance. */
    grant(workspaceId: string, amount: number, reason: string): Promise<number> {
      return withTransaction(deps.db, (tx) => grantCredits(tx, workspaceId, amount, reason));
    },

    async balance(workspaceId: string): Promise<number> {
      const res = await deps.db.query<{ credit_balance: number }>(
        `SELECT credit_balance FROM workspaces WHERE id = $1`,
        [workspaceId],
      );
      if (!res.rows[0]) throw errors.notFound(`No workspace with id ${workspaceId}`);
      return res.rows[0].credit_balance;
    },
  };
}

export type CreditService = ReturnType<typeof createCreditService>;
