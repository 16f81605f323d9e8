import { proxyActivities } from '@temporalio/workflow';
import type { TriggerActivities } from '../activities/triggers';
import type { WebhookActivities } from '../activities/webhooks';
import { type DeliverySchedule, SPEC_DELIVERY_SCHEDULE } from './contracts/webhook-delivery';
import { NON_RETRYABLE, failureInfo } from './failures';

const { markDeliveryFailed } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '10 seconds',
});

// The owner's e-mail about a delivery given up is a courtesy beside the dashboard's notification, already recorded: a
// few tries, as for a paused trigger (workflows/trigger-health.ts).
const { emailNotification } = proxyActivities<Pick<TriggerActivities, 'emailNotification'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumAttempts: 4 },
});

/**
 * One outgoing handoff event (`escalated`, `visitor_message`, `resolved`) until delivered or given up. Given up (a
 * 4xx, a refused address, or the last retry failed), the workspace is told: a notification in the dashboard, e-mailed
 * to the owner, with what failed; the agent's page offers to send it again (a new delivery of the same body).
 */
export async function webhookDeliveryWorkflow(
  deliveryId: string,
  schedule: DeliverySchedule = SPEC_DELIVERY_SCHEDULE,
): Promise<{ delivered: boolean; status?: number }> {
  // Spec, Events → Delivery rules: retried three times after 1, 5 and 25 seconds on 5xx or network error (so
  // initial interval 1 s, coefficient 5, four attempts in all); 4xx and refused addresses are final. The HTTP call
  // has its own 5-second limit inside the activity; this timeout also covers the database writes around it.
  const { deliverWebhook } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: '15 seconds',
    retry: {
      initialInterval: schedule.firstRetryMs,
      backoffCoefficient: 5,
      maximumInterval: schedule.firstRetryMs * 25,
      maximumAttempts: 4,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
  try {
    const { status } = await deliverWebhook(deliveryId);
    return { delivered: true, status };
  } catch (err) {
    // (An activity completed by an earlier release returned nothing.)
    const given = await markDeliveryFailed(deliveryId, failureInfo(err).message);
    if (given?.notificationId) await emailNotification({ notificationId: given.notificationId }).catch(() => undefined);
    return { delivered: false };
  }
}
