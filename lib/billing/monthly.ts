import { type Queryable, withTransaction } from '../db';
import { grantCredits } from '../credits/service';
import type { BillingDeps } from './deps';
import { planOf } from './plans';

/**
 * How far behind now the tally counts (tallyConversations): a conversation's `created_at` is its statement's start,
 * so one still being inserted when the tally reads could otherwise fall before the mark and be counted by neither.
 */
export const TALLY_LAG_MS = 60_000;

/**
 * Adds to each workspace's tally of this month's conversations those created since it last counted, up to a
 * minute ago (TALLY_LAG_MS); run by the maintenance schedule every few minutes, so that a new conversation's quota
 * check counts minutes of rows, not the month's. One tally at a time (a retry, two workers): the table lock
 * conflicts only with itself and writers, never with the checks that read it. Returns the workspaces counted.
 */
export async function tallyConversations({ db, tallyLagMs }: BillingDeps): Promise<number> {
  return withTransaction(db, async (tx) => {
    await tx.query(`LOCK TABLE conversation_tallies IN SHARE ROW EXCLUSIVE MODE`);
    const res = await tx.query(
      `WITH p AS (SELECT date_trunc('month', now()) AS start, now() - make_interval(secs => $1::float8 / 1000) AS upto)
       INSERT INTO conversation_tallies AS t (workspace_id, period, counted, counted_through)
       SELECT w.id, p.start::date, n.count, p.upto
         FROM p CROSS JOIN workspaces w
         LEFT JOIN conversation_tallies prev ON prev.workspace_id = w.id AND prev.period = p.start::date
         CROSS JOIN LATERAL (SELECT count(*) FROM conversations c
                              WHERE c.workspace_id = w.id AND c.created_at < p.upto
                                AND c.created_at >= GREATEST(p.start, COALESCE(prev.counted_through, '-infinity'::timestamptz))) n
        WHERE n.count > 0
       ON CONFLICT (workspace_id, period)
       DO UPDATE SET counted = t.counted + EXCLUDED.counted, counted_through = EXCLUDED.counted_through`,
      [tallyLagMs],
    );
    return res.rowCount ?? 0;
  });
}

/**
 * Grants each workspace its plan's included credits once per calendar month (the maintenance schedule runs it
 * every few minutes). Each workspace is granted in its own transaction, under a row lock, and marked with the
 * month granted: a retry, or two workers at once, grant nothing twice. A workspace whose owner has not confirmed
 * their e-mail address is skipped: its credits wait for the confirmation (lib/accounts/verify.ts verifyEmail),
 * which grants the month's through the same mark.
 */
export async function grantIncludedCredits({ db }: BillingDeps): Promise<number> {
  const due = await db.query<{ id: string }>(
    `SELECT w.id FROM workspaces w
      WHERE w.included_credits_through < date_trunc('month', now())::date
        AND NOT EXISTS (SELECT 1 FROM users u
                         WHERE u.workspace_id = w.id AND u.role = 'owner' AND u.email_verified_at IS NULL)
      LIMIT 500`,
  );
  let granted = 0;
  for (const { id } of due.rows) {
    const credits = await withTransaction(db, (tx) => grantMonthsIncludedCredits(tx, id, { skipLocked: true }));
    if (credits !== null) granted += 1;
  }
  return granted;
}

/**
 * This month's included credits of a workspace's plan, if the month has not been granted yet (`included_credits_through`
 * marks the last month granted), in the caller's transaction under the workspace's row lock: whoever grants — the
 * monthly schedule or the owner's confirmation of their e-mail address — a month is granted once. The credits granted,
 * or null when the month was granted already (or, with `skipLocked`, someone else holds the row).
 */
export async function grantMonthsIncludedCredits(
  tx: Queryable,
  workspaceId: string,
  opts: { skipLocked?: boolean } = {},
): Promise<number | null> {
  const locked = await tx.query<{ plan: string }>(
    `SELECT plan FROM workspaces WHERE id = $1 AND included_credits_through < date_trunc('month', now())::date
       FOR UPDATE${opts.skipLocked ? ' SKIP LOCKED' : ''}`,
    [workspaceId],
  );
  if (!locked.rows[0]) return null;
  const plan = planOf(locked.rows[0].plan);
  if (plan.monthly_credits > 0) {
    await grantCredits(tx, workspaceId, plan.monthly_credits, `${plan.name} plan: included credits`);
  }
  await tx.query(`UPDATE workspaces SET included_credits_through = date_trunc('month', now())::date WHERE id = $1`, [
    workspaceId,
  ]);
  return plan.monthly_credits;
}
