/**
 * The month's conversation quota of a workspace `w`: its own monthly quota plus this month's conversation top-ups.
 * One SQL expression, used by the check that starts a conversation (lib/conversations/turn.ts) and by the usage page,
 * so both always agree. Months are calendar months in the database's time zone (UTC by default).
 */
export const MONTHLY_QUOTA_SQL = `(w.monthly_conversation_quota + COALESCE((SELECT sum(t.amount) FROM billing_topups t
   WHERE t.workspace_id = w.id AND t.kind = 'conversations' AND t.period_start = date_trunc('month', now())::date), 0))`;

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
