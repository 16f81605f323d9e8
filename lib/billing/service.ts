import { type Db, type Queryable, withTransaction } from '../db';
import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import { errors } from '../errors';
import { creditBalanceSql, grantCredits } from '../credits/service';
import type { PaymentProvider } from './payments';
import { PLANS, type Plan, isPlanId, planOf } from './plans';

/**
 * The month's conversation quota of a workspace `w`: its own monthly quota plus this month's conversation top-ups.
 * One SQL expression, used by the check that starts a conversation (lib/conversations/turn.ts) and by the usage page,
 * so both always agree. Months are calendar months in the database's time zone (UTC by default).
 */
export const MONTHLY_QUOTA_SQL = `(w.monthly_conversation_quota + COALESCE((SELECT sum(t.amount) FROM billing_topups t
   WHERE t.workspace_id = w.id AND t.kind = 'conversations' AND t.period_start = date_trunc('month', now())::date), 0))`;

/**
 * How far behind now the tally counts (tallyConversations): a conversation's `created_at` is its statement's start,
 * so one still being inserted when the tally reads could otherwise fall before the mark and be counted by neither.
 */
const TALLY_LAG_MS = 60_000;

/**
 * The conversations a workspace started this month (the quota's `used`), `ws` being an SQL expression of its id: the
 * tally the maintenance schedule keeps plus those created since it counted. An index range of minutes of rows,
 * where counting the whole month's cost a new conversation more as the month filled (14.6 ms of Postgres at 100 000;
 * docs/decisions/093-conversation-tallies.md).
 */
export function conversationsThisMonthSql(ws: string): string {
  return `(SELECT COALESCE(t.counted, 0) + (SELECT count(*) FROM conversations c
                                             WHERE c.workspace_id = ${ws}
                                               AND c.created_at >= GREATEST(date_trunc('month', now()),
                                                                            COALESCE(t.counted_through, '-infinity'::timestamptz)))
             FROM (SELECT 1) one
             LEFT JOIN conversation_tallies t ON t.workspace_id = ${ws} AND t.period = date_trunc('month', now())::date)`;
}

export interface Usage {
  plan: Plan;
  period: { start: number; end: number };
  conversations: { used: number; quota: number; included: number; topped_up: number };
  credits: { balance: number; used_this_period: number };
  topups: { kind: 'conversations' | 'credits'; amount: number; note: string | null; created_at: number }[];
  daily: { date: string; conversations: number; credits: number }[];
}

export interface LedgerEntry {
  id: string;
  amount: number;
  reason: string;
  run_id: string | null;
  created_at: number;
}

/**
 * Billing (docs/decisions/091-plans-and-credits.md): plans, the month's usage and quota, the credits ledger, top-ups and the
 * included credits granted each month, and a plan paid through a payment provider (lib/billing/payments.ts) when one
 * is configured. Otherwise plans and top-ups are recorded by the platform's operators (agentctl).
 */
export function createBillingService(deps: {
  db: Db;
  payments?: PaymentProvider | null;
  /** How far behind now the tally counts (TALLY_LAG_MS unless set). */
  tallyLagMs?: number;
}) {
  const { db } = deps;
  const tallyLagMs = deps.tallyLagMs ?? TALLY_LAG_MS;
  const payments = deps.payments ?? null;

  const service = {
    plans(): readonly Plan[] {
      return PLANS;
    },

    /** The current period's usage and quota, and `days` days of conversations and credits per day (oldest first). */
    async usage(workspaceId: string, days: number): Promise<Usage> {
      const [summary, topups, daily] = await Promise.all([
        db.query<{
          plan: string;
          included: number;
          quota: string;
          balance: number;
          used: string;
          credits_used: string;
          start_ms: string;
          end_ms: string;
        }>(
          `SELECT w.plan, w.monthly_conversation_quota AS included, ${MONTHLY_QUOTA_SQL} AS quota,
                  ${creditBalanceSql('w')} AS balance,
                  ${conversationsThisMonthSql('w.id')} AS used,
                  (SELECT COALESCE(-sum(l.amount), 0) FROM credit_ledger l
                    WHERE l.workspace_id = w.id AND l.amount < 0 AND l.created_at >= date_trunc('month', now())) AS credits_used,
                  (extract(epoch FROM date_trunc('month', now())) * 1000)::bigint AS start_ms,
                  (extract(epoch FROM date_trunc('month', now()) + interval '1 month') * 1000)::bigint AS end_ms
             FROM workspaces w WHERE w.id = $1`,
          [workspaceId],
        ),
        db.query<{ kind: 'conversations' | 'credits'; amount: number; note: string | null; created_ms: string }>(
          `SELECT kind, amount, note, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
             FROM billing_topups WHERE workspace_id = $1 AND period_start = date_trunc('month', now())::date
            ORDER BY created_at DESC`,
          [workspaceId],
        ),
        db.query<{ date: string; conversations: string; credits: string }>(
          `SELECT to_char(d, 'YYYY-MM-DD') AS date,
                  (SELECT count(*) FROM conversations c
                    WHERE c.workspace_id = $1 AND c.created_at >= d AND c.created_at < d + interval '1 day') AS conversations,
                  (SELECT COALESCE(-sum(l.amount), 0) FROM credit_ledger l
                    WHERE l.workspace_id = $1 AND l.amount < 0 AND l.created_at >= d AND l.created_at < d + interval '1 day') AS credits
             FROM generate_series(date_trunc('day', now()) - make_interval(days => $2 - 1), date_trunc('day', now()),
                                  interval '1 day') AS d
            ORDER BY d`,
          [workspaceId, days],
        ),
      ]);
      const s = summary.rows[0];
      if (!s) throw errors.notFound('No such workspace');
      const quota = Number(s.quota);
      return {
        plan: planOf(s.plan),
        period: { start: Number(s.start_ms), end: Number(s.end_ms) },
        conversations: {
          used: Number(s.used),
          quota,
          included: s.included,
          topped_up: quota - s.included,
        },
        credits: { balance: s.balance, used_this_period: Number(s.credits_used) },
        topups: topups.rows.map(({ created_ms, ...t }) => ({ ...t, created_at: Number(created_ms) })),
        daily: daily.rows.map((d) => ({
          date: d.date,
          conversations: Number(d.conversations),
          credits: Number(d.credits),
        })),
      };
    },

    /** The credits ledger, newest first: grants (+) and run charges (−). */
    async ledger(
      workspaceId: string,
      page: { limit: number; cursor?: string },
    ): Promise<{ entries: LedgerEntry[]; next_cursor: string }> {
      const before = page.cursor ? decodeCursor(page.cursor, CURSORS.seq).seq : null;
      const res = await db.query<{
        id: string;
        amount: number;
        reason: string;
        run_id: string | null;
        created_ms: string;
      }>(
        `SELECT id, amount, reason, run_id, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
           FROM credit_ledger WHERE workspace_id = $1 AND ($2::bigint IS NULL OR id < $2)
          ORDER BY id DESC LIMIT $3`,
        [workspaceId, before, page.limit + 1],
      );
      const rows = res.rows.slice(0, page.limit);
      return {
        entries: rows.map(({ created_ms, id, ...e }) => ({ id: String(id), ...e, created_at: Number(created_ms) })),
        next_cursor: res.rows.length > page.limit ? encodeCursor({ seq: Number(rows.at(-1)!.id) }) : '',
      };
    },

    /**
     * Puts a workspace on a plan: its monthly conversation quota becomes the plan's (at once), and its included credits
     * are granted from the next month (this month's were granted already).
     */
    async setPlan(workspaceId: string, planId: string): Promise<Plan> {
      if (!isPlanId(planId))
        throw errors.badRequest(`Unknown plan ${planId}: one of ${PLANS.map((p) => p.id).join(', ')}`);
      const plan = planOf(planId);
      const res = await db.query(`UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3 WHERE id = $1`, [
        workspaceId,
        plan.id,
        plan.monthly_conversations,
      ]);
      if (!res.rowCount) throw errors.notFound(`No workspace with id ${workspaceId}`);
      return plan;
    },

    /**
     * Which plans the dashboard can sell this workspace (a payment provider is configured with their prices; none
     * without one), and whether it pays for its plan already (then its plan is changed by the operators).
     */
    async checkoutOptions(workspaceId: string): Promise<{ checkout: readonly string[]; paid: boolean }> {
      const res = await db.query<{ paid: boolean }>(
        `SELECT payment_subscription_id IS NOT NULL AS paid FROM workspaces WHERE id = $1`,
        [workspaceId],
      );
      const paid = res.rows[0]?.paid ?? false;
      return { checkout: payments && !paid ? payments.plans : [], paid };
    },

    /**
     * Opens the provider's checkout for a plan; the owner pays there and comes back to `returnUrl`. The plan changes
     * when the provider's webhook says it is paid (`handlePaymentEvent`), not here.
     */
    async startCheckout(
      session: { workspaceId: string; email: string },
      planId: string,
      returnUrl: string,
    ): Promise<{ url: string }> {
      if (!payments) {
        throw errors.conflict('Plans cannot be bought here: no payment provider is configured; ask the operators');
      }
      if (!isPlanId(planId) || !payments.plans.includes(planId)) {
        throw errors.badRequest(`plan: one of ${payments.plans.join(', ')}`);
      }
      const current = await db.query<{ plan: string; payment_subscription_id: string | null }>(
        `SELECT plan, payment_subscription_id FROM workspaces WHERE id = $1`,
        [session.workspaceId],
      );
      if (current.rows[0]?.plan === planId) throw errors.conflict('The workspace is on this plan already');
      // A second checkout would start a second subscription beside the first: a paid plan is changed by the operators.
      if (current.rows[0]?.payment_subscription_id) {
        throw errors.conflict('The workspace pays for its plan already: ask the operators to change it');
      }
      const { url } = await payments.startCheckout({
        workspaceId: session.workspaceId,
        planId,
        email: session.email,
        successUrl: `${returnUrl}?checkout=done`,
        cancelUrl: `${returnUrl}?checkout=cancelled`,
      });
      return { url };
    },

    /**
     * A payment provider's webhook (signature checked by the provider's reader): a paid checkout puts the workspace on
     * its plan, an ended subscription takes it back to Free. Each event is handled once, in one transaction with its
     * effect: a resent event changes nothing.
     */
    async handlePaymentEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>) {
      if (!payments) throw errors.notFound('No payment provider is configured');
      const event = payments.readEvent(rawBody, headers);
      await withTransaction(db, async (tx) => {
        const workspaceId =
          event.kind === 'plan_paid'
            ? event.workspaceId
            : event.kind === 'subscription_ended'
              ? ((
                  await tx.query<{ id: string }>(`SELECT id FROM workspaces WHERE payment_subscription_id = $1`, [
                    event.subscriptionId,
                  ])
                ).rows[0]?.id ?? null)
              : null;
        const fresh = await tx.query(
          `INSERT INTO payment_events (provider, event_id, kind, workspace_id)
           SELECT $1, $2, $3, (SELECT id FROM workspaces WHERE id = $4)
           ON CONFLICT DO NOTHING`,
          [payments.name, event.id, event.kind, workspaceId],
        );
        if (!fresh.rowCount || !workspaceId) return;
        if (event.kind === 'plan_paid' && isPlanId(event.planId)) {
          const plan = planOf(event.planId);
          await tx.query(
            `UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3, payment_subscription_id = $4 WHERE id = $1`,
            [workspaceId, plan.id, plan.monthly_conversations, event.subscriptionId],
          );
        } else if (event.kind === 'subscription_ended') {
          const free = planOf('free');
          await tx.query(
            `UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3, payment_subscription_id = NULL
              WHERE id = $1`,
            [workspaceId, free.id, free.monthly_conversations],
          );
        }
      });
      return { received: true as const };
    },

    /**
     * Records a top-up: extra conversations for the current month (a used-up quota opens again at once: the next
     * conversation's check counts them), or credits (added to the balance and the ledger).
     */
    async topUp(
      workspaceId: string,
      topUp: { kind: 'conversations' | 'credits'; amount: number; note?: string },
    ): Promise<Usage> {
      await withTransaction(db, async (tx) => {
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
      return service.usage(workspaceId, 1);
    },

    /**
     * Adds to each workspace's tally of this month's conversations those created since it last counted, up to a
     * minute ago (TALLY_LAG_MS); run by the maintenance schedule every few minutes, so that a new conversation's quota
     * check counts minutes of rows, not the month's. One tally at a time (a retry, two workers): the table lock
     * conflicts only with itself and writers, never with the checks that read it. Returns the workspaces counted.
     */
    async tallyConversations(): Promise<number> {
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
    },

    /**
     * Grants each workspace its plan's included credits once per calendar month (the maintenance schedule runs it
     * every few minutes). Each workspace is granted in its own transaction, under a row lock, and marked with the
     * month granted: a retry, or two workers at once, grant nothing twice. A workspace whose owner has not confirmed
     * their e-mail address is skipped: its credits wait for the confirmation (lib/accounts/verify.ts verifyEmail),
     * which grants the month's through the same mark.
     */
    async grantIncludedCredits(): Promise<number> {
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
    },
  };
  return service;
}

export type BillingService = ReturnType<typeof createBillingService>;

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
