import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import type { Llm } from '../lib/llm';
import type { SecretBox } from '../lib/secret-box';
import type { Client } from '@temporalio/client';
import type { Mailer } from '../lib/mailer';
import type { DeltaPublisher } from '../lib/streams';
import { createAgentRunActivities, type Passage } from './agent-run';
import { createConversationActivities } from './conversation';
import { createMaintenanceActivities } from './maintenance';
import { createSiteScanActivities } from './site-scan';
import { createTriggerActivities } from './triggers';
import { createWebhookActivities } from './webhooks';

/** Everything activities may use, built once by the worker (or a test) and injected: no globals. */
export interface ActivityDeps {
  db: Db;
  llm: Llm | null;
  defaultModel: string;
  retrieve: (botId: string, query: string) => Promise<Passage[]>;
  deltas: DeltaPublisher;
  fetch: SafeFetch;
  secrets: SecretBox;
  temporalClient: Client;
  taskQueue: string;
  mailer: Mailer | null;
}

export function createActivities(deps: ActivityDeps) {
  const conversation = createConversationActivities(deps);
  return {
    ...createMaintenanceActivities(deps),
    ...createAgentRunActivities(deps, conversation),
    ...conversation,
    ...createWebhookActivities(deps),
    ...createSiteScanActivities(deps),
    ...createTriggerActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
