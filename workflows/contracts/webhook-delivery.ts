/**
 * One signed webhook to the integrator and its retry schedule.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export function deliveryWorkflowId(deliveryId: string): string {
  return `delivery/${deliveryId}`;
}

/**
 * When a failed attempt is tried again: after `firstRetryMs`, then 5 and 25 times that (contract, Delivery rules 1: 1, 5
 * and 25 s). Chosen by whoever starts the delivery, from WEBHOOK_RETRY_FIRST_MS; a delivery started without one (by
 * an earlier release) keeps the contract's.
 */
export interface DeliverySchedule {
  firstRetryMs: number;
}

export const SPEC_DELIVERY_SCHEDULE: DeliverySchedule = { firstRetryMs: 1_000 };

/** How a delivery ended for good, told to the workspace (lib/deliveries/store.ts, markDeliveryFailed). */
export interface DeliveryGivenUp {
  /** A notification newly recorded, to e-mail to the owner; null when an unread one about the agent was updated. */
  notificationId: string | null;
}
