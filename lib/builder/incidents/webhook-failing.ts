import type { Queryable } from '../../db';
import { type AgentFacts, type Incident, RECENT_DAYS, lastError, ms } from './kinds';

interface FailedDeliveries {
  failed: number;
  since: Date | null;
  last_id: string | null;
  last_event: string | null;
  last_error: string | null;
}

/** Deliveries given up to the agent's current webhook address since the last one that arrived, within the window. */
export async function readFailedDeliveries(
  db: Queryable,
  agentId: string,
  webhookUrl: string | null,
): Promise<FailedDeliveries | undefined> {
  const res = await db.query<FailedDeliveries>(
    `SELECT count(*)::int AS failed, min(d.created_at) AS since,
            (array_agg(d.id ORDER BY d.created_at DESC, d.id DESC))[1] AS last_id,
            (array_agg(d.event ORDER BY d.created_at DESC, d.id DESC))[1] AS last_event,
            (array_agg(d.last_error ORDER BY d.created_at DESC, d.id DESC))[1] AS last_error
       FROM webhook_deliveries d
      WHERE d.bot_id = $1 AND d.status = 'failed' AND d.url = $2
        AND d.created_at > now() - make_interval(days => $3)
        AND d.created_at > COALESCE((SELECT max(ok.created_at) FROM webhook_deliveries ok
                                      WHERE ok.bot_id = $1 AND ok.status = 'delivered'), '-infinity')`,
    [agentId, webhookUrl, RECENT_DAYS],
  );
  return res.rows[0];
}

/** `webhook_failing`: deliveries given up in 7 days to the current address, after its last delivered one. */
export function webhookFailing(bot: AgentFacts, d: FailedDeliveries | undefined): Incident[] {
  if (!bot.webhook_url || !d || d.failed <= 0 || !d.last_id) return [];
  return [
    {
      kind: 'webhook_failing',
      severity: 'blocking',
      problem:
        `${d.failed} notification(s) to your webhook address ${bot.webhook_url} could not be delivered, so your ` +
        `team may not hear about conversations handed to a person.${lastError(d.last_error)}`,
      fix:
        'Make sure the address is reachable and answers signed POST requests with a 2xx status, or ask me to ' +
        'change the webhook address.',
      builder_can_fix: true,
      since: ms(d.since),
      details: {
        url: bot.webhook_url,
        failed_deliveries: d.failed,
        last_delivery_id: d.last_id,
        last_event: d.last_event ?? '',
        last_error: d.last_error,
      },
    },
  ];
}
