import { type ActionDeps, createActionActivities } from './actions';
import { type AgentRunDeps, createAgentRunActivities } from './agent-run';
import { type BuilderDeps, createBuilderActivities } from './builder';
import { type ConversationDeps, createConversationActivities } from './conversation';
import { type KnowledgeCheckDeps, createKnowledgeCheckActivities } from './knowledge-check';
import { type KnowledgeFileDeps, createKnowledgeFileActivities } from './knowledge-file';
import { type MaintenanceDeps, createMaintenanceActivities } from './maintenance';
import { type SiteScanDeps, createSiteScanActivities } from './site-scan';
import { type TriggerDeps, createTriggerActivities } from './triggers';
import { type WebhookDeps, createWebhookActivities } from './webhooks';

/**
 * Everything activities may use, built once by the worker (or a test) and injected: no globals. It is the union of
 * what each factory declares it needs, so a new dependency is declared once, next to the activities that use it.
 */
export type ActivityDeps = ActionDeps &
  AgentRunDeps &
  BuilderDeps &
  ConversationDeps &
  KnowledgeCheckDeps &
  KnowledgeFileDeps &
  MaintenanceDeps &
  SiteScanDeps &
  TriggerDeps &
  WebhookDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    ...createActionActivities(deps),
    ...createAgentRunActivities(deps),
    ...createBuilderActivities(deps),
    ...createConversationActivities(deps),
    ...createKnowledgeCheckActivities(deps),
    ...createKnowledgeFileActivities(deps),
    ...createMaintenanceActivities(deps),
    ...createSiteScanActivities(deps),
    ...createTriggerActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
