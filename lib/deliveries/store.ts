import { createHmac } from 'node:crypto';
import type { DeliveryGivenUp } from '../../workflows/contracts/webhook-delivery';
import { type Db, withTransaction } from '../db';
import { notifyUnlessUnread } from '../notifications/service';

/**
 * Outgoing webhook deliveries (contract, Events), the webhook activities' side: the `webhook_deliveries` rows a
 * conversation transition records, their signature, each attempt's outcome, and a delivery given up told to the
 * workspace. The webhookDelivery workflow (`delivery/{id}`) spaces the attempts; the service (./service.ts) lists
 * what was given up and sends it again (docs/decisions/144-failed-deliveries-told.md).
 */

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<raw body>` with the bot's `whsec_` secret (contract, Events). */
export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** A delivery with what it is sent with: the address, the body, and the bot's sealed signing secret. */
export async function loadDelivery(
  db: Db,
  deliveryId: string,
): Promise<{ url: string; body: string; secretSealed: string } | null> {
  const res = await db.query<{ url: string; body: string; secret: string }>(
    `SELECT d.url, d.body, b.webhook_secret_sealed AS secret FROM webhook_deliveries d JOIN bots b ON b.id = d.bot_id WHERE d.id = $1`,
    [deliveryId],
  );
  const row = res.rows[0];
  return row ? { url: row.url, body: row.body, secretSealed: row.secret } : null;
}

/** One attempt's outcome; an attempt recorded already (a retried activity) is kept as it was. */
export async function recordAttempt(
  db: Db,
  input: { deliveryId: string; attempt: number; statusCode: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await db.query(
    `WITH a AS (INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (delivery_id, attempt) DO NOTHING)
     UPDATE webhook_deliveries SET attempts = GREATEST(attempts, $2), last_error = $4 WHERE id = $1`,
    [input.deliveryId, input.attempt, input.statusCode, input.error, input.durationMs],
  );
}

export async function markDelivered(db: Db, deliveryId: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET status = 'delivered', finished_at = now() WHERE id = $1`, [deliveryId]);
}

/** What each event is, in the words of a notification. */
const EVENT_WORDS: Record<string, string> = {
  escalated: 'a conversation handed to your team',
  visitor_message: "a visitor's message to your team",
  resolved: 'a conversation closed',
};

/** An address as told in notifications and e-mails: scheme and host only (paths and queries often carry tokens). */
function addressOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the webhook address';
  }
}

/**
 * The delivery was given up (4xx, refused address, or retries exhausted): marked failed, and the workspace told in
 * the same transaction — what failed (the event, the receiver's address, the last answer or error, when) and where to
 * send it again. While an earlier such notification about the agent is unread it is updated (a count, the latest
 * failure) instead of adding another, so an outage tells the owner once. A retried call finds the delivery failed
 * already and tells nothing twice. Returns the notification to e-mail, if one was recorded.
 */
export async function markDeliveryFailed(db: Db, deliveryId: string, error: string): Promise<DeliveryGivenUp> {
  return withTransaction(db, async (tx) => {
    const res = await tx.query<{
      bot_id: string;
      bot_name: string;
      workspace_id: string;
      event: string;
      url: string;
      session_id: string | null;
      attempts: number;
      last_status: number | null;
      failed_ms: number;
    }>(
      `UPDATE webhook_deliveries d SET status = 'failed', finished_at = now(), last_error = $2
         FROM bots b
        WHERE d.id = $1 AND d.status = 'pending' AND b.id = d.bot_id
       RETURNING d.bot_id, b.name AS bot_name, b.workspace_id, d.event, d.url, d.session_id, d.attempts,
                 (SELECT a.status_code FROM webhook_attempts a WHERE a.delivery_id = d.id
                   ORDER BY a.attempt DESC LIMIT 1) AS last_status,
                 (extract(epoch FROM d.finished_at) * 1000)::bigint AS failed_ms`,
      [deliveryId, error],
    );
    const d = res.rows[0];
    if (!d) return { notificationId: null };
    const origin = addressOrigin(d.url);
    const attempts = Math.max(d.attempts, 1);
    const when = `${new Date(Number(d.failed_ms)).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const what =
      `The "${d.event}" event (${EVENT_WORDS[d.event] ?? 'a handoff event'}) could not be delivered to ${origin} ` +
      `after ${attempts} attempt${attempts === 1 ? '' : 's'}, at ${when}: ${error.slice(0, 300)}.`;
    const after = "Open the agent's settings in the dashboard to see what failed and send it again.";
    const data = {
      delivery_id: deliveryId,
      event: d.event,
      url: origin,
      session_id: d.session_id,
      attempts,
      last_status: d.last_status,
      last_error: error.slice(0, 300),
      failed_at: Number(d.failed_ms),
    };
    const notificationId = await notifyUnlessUnread(
      tx,
      {
        id: `ntf_given_up_${deliveryId}`,
        workspaceId: d.workspace_id,
        botId: d.bot_id,
        kind: 'delivery_failed',
        title: `${d.bot_name}: a webhook event could not be delivered`,
        body: `${what} Your team may not have heard about it. ${after}`,
        data: { ...data, count: 1 },
      },
      (unread) => {
        const count = (typeof unread.count === 'number' ? unread.count : 1) + 1;
        return {
          title: `${d.bot_name}: ${count} webhook events could not be delivered`,
          body: `The latest: ${what} ${after}`,
          data: { ...data, count },
        };
      },
    );
    return { notificationId };
  });
}
