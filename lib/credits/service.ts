import { type Db, type Queryable, withTransaction } from '../db';
import { errors } from '../errors';

/**
 * Credits (README, Credits): a workspace's balance and its ledger. Runs are charged where they finish, in the
 * run's own statement (lib/runs/bookkeeping.ts), so a charge and the run's outcome commit together; the charge goes
 * to one of the workspace's balance shards (creditBalanceSql). The platform's model used outside a run (the operator's
 * briefing, a builder turn) is charged the same way by `chargeModelUse`.
 */

/** How many rows a workspace's run charges are spread over (migrations/1763803500000_credit_balance_shards.sql). */
const CREDIT_SHARDS = 16;

/**
 * The credit balance of the workspace row `w` (an alias in the caller's query), as SQL: the workspace's own column,
 * where grants go, plus the run charges spread over its shards so that concurrent turns do not queue for one row.
 */
export function creditBalanceSql(w: string): string {
  return `(${w}.credit_balance + COALESCE((SELECT sum(s.balance) FROM credit_balance_shards s WHERE s.workspace_id = ${w}.id), 0))::int`;
}

/**
 * The statement part that charges a run to the shard its id chooses: `charges` names a relation (a CTE) whose rows'
 * `amount` (negative) are added; `workspaceId` and `runId` are placeholders or expressions. A shard's row is made by
 * its first charge.
 */
export function chargeShardSql(workspaceId: string, runId: string, charges: string): string {
  return `INSERT INTO credit_balance_shards AS s (workspace_id, shard, balance)
          SELECT ${workspaceId}, hashtext(${runId}) & ${CREDIT_SHARDS - 1}, amount FROM ${charges}
          ON CONFLICT (workspace_id, shard) DO UPDATE SET balance = s.balance + EXCLUDED.balance`;
}

/**
 * Credits charged for a run (README, Credits): one per run plus one per started 1 000 tokens, the tokens weighted by
 * the model's price relative to the default (lib/billing/models.ts; the default's weight is 1).
 */
export function creditsFor(promptTokens: number, completionTokens: number, weight = 1): number {
  // Weighted tokens are rounded to whole ones first: 1 000 × 2.7 is 2700.0000000000005 in floating point.
  const weighted = Math.round((promptTokens + completionTokens) * weight);
  return 1 + Math.ceil(weighted / 1000);
}

/** The platform's model used for a workspace outside a run, to be charged as a run that finishes is. */
export interface ModelUse {
  workspaceId: string;
  /** One charge per key whatever retries happen (`credit_ledger.charge_key`): `briefing:<delivery id>`, `builder:<turn id>`. */
  key: string;
  /** The ledger's reason, as the billing page shows it. */
  reason: string;
  promptTokens: number;
  completionTokens: number;
  /** The model's credit weight; the platform's default model (what briefings and the builder use) weighs 1. */
  weight?: number;
}

/**
 * Charges a model use outside a run (docs/decisions/137-briefings-and-builder-on-the-bill.md): `creditsFor` its tokens,
 * one ledger entry and one shard of the balance, in one statement, in the caller's transaction when given one. A key
 * charged already charges nothing more (a retried activity). Returns the credits this call charged.
 */
export async function chargeModelUse(q: Queryable, use: ModelUse): Promise<number> {
  const credits = creditsFor(use.promptTokens, use.completionTokens, use.weight ?? 1);
  const res = await q.query<{ charged: number }>(
    `WITH l AS (INSERT INTO credit_ledger (workspace_id, amount, reason, charge_key) VALUES ($1, -$2::int, $3, $4)
                ON CONFLICT (charge_key) DO NOTHING RETURNING amount),
          s AS (${chargeShardSql('$1', '$4', 'l')} RETURNING 1)
     SELECT COALESCE(-(SELECT amount FROM l), 0)::int AS charged`,
    [use.workspaceId, credits, use.reason, use.key],
  );
  return res.rows[0]?.charged ?? 0;
}

/** Adds credits to a workspace: one ledger row and the balance, in the caller's transaction. */
export async function grantCredits(
  tx: Queryable,
  workspaceId: string,
  amount: number,
  reason: string,
): Promise<number> {
  const res = await tx.query<{ balance: number }>(
    `UPDATE workspaces w SET credit_balance = credit_balance + $2 WHERE id = $1 RETURNING ${creditBalanceSql('w')} AS balance`,
    [workspaceId, amount],
  );
  if (!res.rows[0]) throw errors.notFound(`No workspace with id ${workspaceId}`);
  await tx.query(`INSERT INTO credit_ledger (workspace_id, amount, reason) VALUES ($1, $2, $3)`, [
    workspaceId,
    amount,
    reason,
  ]);
  return res.rows[0].balance;
}

export function createCreditService(deps: { db: Db }) {
  return {
    /** Grants credits (an operator's top-up); returns the new balance. */
    grant(workspaceId: string, amount: number, reason: string): Promise<number> {
      return withTransaction(deps.db, (tx) => grantCredits(tx, workspaceId, amount, reason));
    },

    /** Charges the platform's model used outside a run (`chargeModelUse`); returns the credits charged. */
    charge(use: ModelUse): Promise<number> {
      return chargeModelUse(deps.db, use);
    },

    async balance(workspaceId: string): Promise<number> {
      const res = await deps.db.query<{ balance: number }>(
        `SELECT ${creditBalanceSql('w')} AS balance FROM workspaces w WHERE id = $1`,
        [workspaceId],
      );
      if (!res.rows[0]) throw errors.notFound(`No workspace with id ${workspaceId}`);
      return res.rows[0].balance;
    },
  };
}

export type CreditService = ReturnType<typeof createCreditService>;
