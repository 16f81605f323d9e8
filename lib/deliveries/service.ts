import type { z } from 'zod';
import type { FailedDelivery as FailedDeliverySchema } from '../schemas/deliveries';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { type DeliverySchedule, deliveryWorkflowId } from '../../workflows/contracts/webhook-delivery';
import { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';
import { type Db, withTransaction } from '../db';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import type { Temporal } from '../temporal';

/**
 * Outgoing webhook deliveries for the dashboard: the ones given up lately, and sending one again (a new delivery of
 * the same body, `delivery/{id}`). A delivery given up is told to the workspace by the workflow (./store.ts,
 * markDeliveryFailed): docs/decisions/144-failed-deliveries-told.md.
 */

/** A delivery given up, as the agent's page lists it; `sent_again` when it was sent again and that is not given up. */
/** The schema's type (lib/schemas/deliveries.ts): what the route declares is what this returns. */
export type FailedDeliveryView = z.infer<typeof FailedDeliverySchema>;

export function createDeliveryService(deps: { db: Db; temporal: Temporal; schedule: DeliverySchedule }) {
  const { db } = deps;
  return {
    /**
     * The agent's deliveries given up in the last days, newest first. One sent again whose new delivery failed too
     * is left out: the new one is listed (it is the same event, tried later).
     */
    async failed(botId: string): Promise<FailedDeliveryView[]> {
      const res = await db.query<{
        id: string;
        event: string;
        session_id: string | null;
        url: string;
        attempts: number;
        last_status: number | null;
        last_error: string | null;
        created_ms: number;
        failed_ms: number;
        again_id: string | null;
        again_status: 'pending' | 'delivered' | 'failed' | null;
      }>(
        `SELECT d.id, d.event, d.session_id, d.url, d.attempts, d.last_error,
                (SELECT a.status_code FROM webhook_attempts a WHERE a.delivery_id = d.id
                  ORDER BY a.attempt DESC LIMIT 1) AS last_status,
                (extract(epoch FROM d.created_at) * 1000)::bigint AS created_ms,
                (extract(epoch FROM d.finished_at) * 1000)::bigint AS failed_ms,
                again.id AS again_id, again.status AS again_status
           FROM webhook_deliveries d
           LEFT JOIN LATERAL (SELECT r.id, r.status FROM webhook_deliveries r WHERE r.resend_of = d.id
                               ORDER BY r.created_at DESC LIMIT 1) again ON true
          WHERE d.bot_id = $1 AND d.status = 'failed' AND d.finished_at > now() - make_interval(days => $2)
            AND (again.status IS NULL OR again.status <> 'failed')
          ORDER BY d.finished_at DESC, d.id DESC
          LIMIT $3`,
        [botId, LIMITS.failedDeliveries.days, LIMITS.failedDeliveries.listed],
      );
      return res.rows.map((r) => ({
        id: r.id,
        event: r.event,
        session_id: r.session_id,
        url: r.url,
        attempts: r.attempts,
        last_status: r.last_status,
        last_error: r.last_error,
        created_at: Number(r.created_ms),
        failed_at: Number(r.failed_ms),
        sent_again:
          r.again_id && r.again_status && r.again_status !== 'failed'
            ? { id: r.again_id, status: r.again_status }
            : null,
      }));
    },

    /**
     * Sends a delivery given up again: a new delivery of the same body (receivers are told the same event may come
     * twice, contract, Delivery rules 4), to the agent's webhook address as it is now (the owner may have fixed it), signed
     * afresh at each attempt, with the same retries. 404 for another agent's or an unknown delivery; 409 `conflict`
     * when it did not fail, when it is being (or was) sent again already, or when the agent has no address now.
     */
    async sendAgain(botId: string, deliveryId: string): Promise<{ id: string; status: 'pending'; resend_of: string }> {
      const id = `dlv_${randomUUID().replace(/-/g, '')}`;
      return withTransaction(db, async (tx) => {
        const found = await tx.query<{ status: string; url: string | null }>(
          `SELECT d.status, b.handoff_webhook_url AS url
             FROM webhook_deliveries d JOIN bots b ON b.id = d.bot_id
            WHERE d.id = $1 AND d.bot_id = $2`,
          [deliveryId, botId],
        );
        const d = found.rows[0];
        if (!d) throw errors.notFound('No delivery of this agent with this id');
        if (d.status !== 'failed') throw new ApiError('conflict', 'Only a delivery that failed can be sent again');
        if (!d.url) throw new ApiError('conflict', 'The agent has no webhook address: set one in its settings first');
        // At most one resend of a delivery under way or delivered (a unique index): a second click is a 409.
        const inserted = await tx.query(
          `INSERT INTO webhook_deliveries (id, bot_id, session_id, event, url, body, resend_of)
           SELECT $1, d.bot_id, d.session_id, d.event, $3, d.body, d.id FROM webhook_deliveries d WHERE d.id = $2
           ON CONFLICT (resend_of) WHERE status IN ('pending', 'delivered') DO NOTHING`,
          [id, deliveryId, d.url],
        );
        if (!inserted.rowCount) throw new ApiError('conflict', 'This delivery was sent again already');
        // Started inside the transaction: if the commit then failed, the workflow finds no delivery and gives up.
        try {
          await deps.temporal.client.workflow.start(webhookDeliveryWorkflow, {
            workflowId: deliveryWorkflowId(id),
            taskQueue: deps.temporal.taskQueue,
            args: [id, deps.schedule],
            searchAttributes: { BotId: [botId] },
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
        return { id, status: 'pending' as const, resend_of: deliveryId };
      });
    },
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;
