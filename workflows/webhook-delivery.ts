import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { NON_RETRYABLE, failureInfo } from './failures';

// Spec, Events → Delivery rules: retried three times after 1, 5 and 25 seconds on 5xx or network error (so
// initial interval 1 s, coefficient 5, four attempts in all); 4xx and refused addresses are final. The HTTP call
// has its own 5-second limit inside the activity; this timeout also covers the database writes around it.
const { deliverWebhook } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 5,
    maximumInterval: '25 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

const { markDeliveryFailed } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '10 seconds',
});

/** One outgoing handoff event (`escalated`, `visitor_message`, `resolved`) until delivered or given up. */
export async function webhookDeliveryWorkflow(deliveryId: string): Promise<{ delivered: boolean; status?: number }> {
  try {
    const { status } = await deliverWebhook(deliveryId);
    return { delivered: true, status };
  } catch (err) {
    await markDeliveryFailed(deliveryId, failureInfo(err).message);
    return { delivered: false };
  }
}
