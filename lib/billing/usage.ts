import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import { errors } from '../errors';
import { creditBalanceSql } from '../credits/service';
import type { BillingDeps } from './deps';
import { type Plan, planOf } from './plans';
import { MONTHLY_QUOTA_SQL, conversationsThisMonthSql } from './quota';

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

/** The current period's usage and quota, and `days` days of conversations and credits per day (oldest first). */
export async function usage({ db }: BillingDeps, workspaceId: string, days: number): Promise<Usage> {
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
}

/** The credits ledger, newest first: grants (+) and run charges (−). */
export async function ledger(
  { db }: BillingDeps,
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
}
