/**
 * One signed webhook to the integrator and its retry schedule.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export function deliveryWorkflowId(deliveryId: string): string {
  return `delivery/${deliveryId}`;
}
