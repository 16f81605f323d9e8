import { Context } from '@temporalio/activity';
import type { Db } from '../lib/db';
import { loadDelivery, markDelivered, markDeliveryFailed, recordAttempt, signDelivery } from '../lib/deliveries/store';
import type { SafeFetch } from '../lib/http/safe-fetch';
import type { SecretBox } from '../lib/secret-box';
import type { DeliveryGivenUp } from '../workflows/contracts/webhook-delivery';
import { failure } from '../workflows/failures';

export interface WebhookDeps {
  db: Db;
  fetch: SafeFetch;
  secrets: SecretBox;
}

/** Spec, Events → Delivery rules 3: a delivery has 5 seconds. */
const DELIVERY_TIMEOUT_MS = 5_000;
/** How much of a receiver's answer is read; the rest is dropped. */
const RECEIVER_BODY_BYTES = 16 * 1024;

export function createWebhookActivities({ db, fetch, secrets }: WebhookDeps) {
  return {
    /** One attempt of one delivery; the workflow's retry policy spaces the attempts (1, 5, 25 s). */
    async deliverWebhook(deliveryId: string): Promise<{ status: number }> {
      const attempt = Context.current().info.attempt;
      const row = await loadDelivery(db, deliveryId);
      if (!row) throw failure('webhook_rejected', `Delivery ${deliveryId} no longer exists`);
      // The timestamp is taken per attempt, so a retry is not rejected by a receiver's 300-second tolerance.
      const timestamp = Math.floor(Date.now() / 1000);
      const started = Date.now();
      const record = (statusCode: number | null, error: string | null) =>
        recordAttempt(db, { deliveryId, attempt, statusCode, error, durationMs: Date.now() - started });
      let status: number;
      try {
        const response = await fetch(row.url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'User-Agent': 'AgentPlatform-Webhooks/1',
            'X-Service-Timestamp': String(timestamp),
            'X-Service-Signature': signDelivery(secrets.open(row.secretSealed), timestamp, row.body),
          },
          body: row.body,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          // The receiver's status is its answer; a large body after a 2xx is read up to a bound and ignored.
          maxBytes: RECEIVER_BODY_BYTES,
          overflow: 'truncate',
          followRedirects: false,
        });
        status = response.status;
      } catch (err) {
        const code = (err as { code?: string }).code;
        const message = `${code ?? 'error'}: ${(err as Error).message}`;
        await record(null, message);
        throw failure(code === 'outbound_blocked' ? 'webhook_blocked' : 'webhook_failed', message);
      }
      if (status >= 200 && status < 300) {
        await record(status, null);
        await markDelivered(db, deliveryId);
        return { status };
      }
      await record(status, `HTTP ${status}`);
      // Redirects are not followed for signed deliveries; like a 4xx, the receiver's answer is final.
      throw failure(status < 500 ? 'webhook_rejected' : 'webhook_failed', `Receiver answered HTTP ${status}`);
    },

    /** Given up: marked failed, and the workspace told (a notification; the workflow e-mails a new one). */
    markDeliveryFailed(deliveryId: string, error: string): Promise<DeliveryGivenUp> {
      return markDeliveryFailed(db, deliveryId, error);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
