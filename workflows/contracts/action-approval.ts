import { defineSignal } from '@temporalio/workflow';

/**
 * A person approving or refusing an action a run asked to take.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export interface ApprovalDecision {
  approvalId: string;
  approved: boolean;
}

export const approvalDecisionSignal = defineSignal<[ApprovalDecision]>('approvalDecision');

export function approvalWorkflowId(approvalId: string): string {
  return `approval/${approvalId}`;
}
