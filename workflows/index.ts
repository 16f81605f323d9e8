// The worker bundles this file: every workflow the platform runs is exported from here.
export { actionApprovalWorkflow } from './action-approval';
export { agentRunWorkflow } from './agent-run';
export { conversationWorkflow } from './conversation';
export { maintenanceWorkflow } from './maintenance';
export { siteScanWorkflow } from './site-scan';
export { triggerHealthWorkflow } from './trigger-health';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { builderThreadWorkflow } from './builder-thread';
export { knowledgeFileWorkflow } from './knowledge-file';
export { knowledgeCheckWorkflow } from './knowledge-check';
