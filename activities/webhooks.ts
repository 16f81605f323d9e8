import { ApplicationFailure, Context } from '@temporalio/activity';
import { createHmac } from 'node:crypto';
import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import type { SecretBox } from '../lib/secret-box';

export interface WebhookDeps {
  db: Db;
  fetch: SafeFetch;
  secrets: SecretBox;
}

/** Spec, Events → Delivery rules 3: a delivery has 5 seconds. */
export const DELIVERY_TIMEOUT_MS = 5_000;

export const WEBHOOK_FAILURE = {
  /** 4xx: final (Delivery rules 2). */
  rejected: 'webhook_rejected',
  /** Address refused by the SSRF policy: final (Delivery rules 5). */
  blocked: 'webhook_blocked',
  /** 5xx or network error: retried (Delivery rules 1). */
  failed: 'webhook_failed',
} as const;

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<raw body>` with the bot's `whsec_` secret (spec, Events). */
export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function createWebhookActivities({ db, fetch, secrets }: WebhookDeps) {
  return {
    /** One attempt of one delivery; the workflow's retry policy spaces the attempts (1, 5, 25 s). */
    async deliverWebhook(deliveryId: string): Promise<{ status: number }> {
      const attempt = Context.current().info.attempt;
      const res = await db.query<{ url: string; body: string; secret: string }>(
        `SELECT d.url, d.body, b.webhook_secret_sealed AS secret FROM webhook_deliveries d JOIN bots b ON b.id = d.bot_id WHERE d.id = $1`,
        [deliveryId],
      );
      const row = res.rows[0];
      if (!row) throw ApplicationFailure.nonRetryable(`Delivery ${deliveryId} no longer exists`, WEBHOOK_FAILURE.rejected);
      // The timestamp is taken per attempt, so a retry is not rejected by a receiver's 300-second tolerance.
      const timestamp = Math.floor(Date.now() / 1000);
      const started = Date.now();
      const record = (statusCode: number | null, error: string | null) =>
        db.query(
          `WITH a AS (INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)
                      ON CONFLICT (delivery_id, attempt) DO NOTHING)
           UPDATE webhook_deliveries SET attempts = GREATEST(attempts, $2), last_error = $4 WHERE id = $1`,
          [deliveryId, attempt, statusCode, error, Date.now() - started],
        );
      let status: number;
      try {
        const response = await fetch(row.url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'User-Agent': 'AgentPlatform-Webhooks/1',
            'X-Service-Timestamp': String(timestamp),
            'X-Service-Signature': signDelivery(secrets.open(row.secret), timestamp, row.body),
          },
          body: row.body,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          maxBytes: 64 * 1024,
          followRedirects: false,
        });
        status = response.status;
      } catch (err) {
        const code = (err as { code?: string }).code;
        const message = `${code ?? 'error'}: ${(err as Error).message}`;
        await record(null, message);
        if (code === 'outbound_blocked') throw ApplicationFailure.nonRetryable(message, WEBHOOK_FAILURE.blocked);
        throw ApplicationFailure.retryable(message, WEBHOOK_FAILURE.failed);
      }
      if (status >= 200 && status < 300) {
        await record(status, null);
        await db.query(`UPDATE webhook_deliveries SET status = 'delivered', finished_at = now() WHERE id = $1`, [deliveryId]);
        return { status };
      }
      await record(status, `HTTP ${status}`);
      // Redirects are not followed for signed deliveries; like a 4xx, the receiver's answer is final.
      if (status < 500) throw ApplicationFailure.nonRetryable(`Receiver answered HTTP ${status}`, WEBHOOK_FAILURE.rejected);
      throw ApplicationFailure.retryable(`Receiver answered HTTP ${status}`, WEBHOOK_FAILURE.failed);
    },

    async markDeliveryFailed(deliveryId: string, error: string): Promise<void> {
      await db.query(`UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), last_error = $2 WHERE id = $1 AND status = 'pending'`, [
        deliveryId,
        error,
      ]);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
