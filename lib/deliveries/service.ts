import { createHmac } from 'node:crypto';
import type { Db } from '../db';

/**
 * Outgoing webhook deliveries (spec, Events): the `webhook_deliveries` rows a conversation transition records, their
 * signature, and each attempt's outcome. The webhookDelivery workflow (`delivery/{id}`) spaces the attempts.
 */

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<raw body>` with the bot's `whsec_` secret (spec, Events). */
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

/** The delivery was given up (4xx, refused address, or retries exhausted). */
export async function markDeliveryFailed(db: Db, deliveryId: string, error: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), last_error = $2 WHERE id = $1 AND status = 'pending'`,
    [deliveryId, error],
  );
}
