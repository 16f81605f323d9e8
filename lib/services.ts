import type { Config } from './config';
import type { Db } from './db';
import type { Embedder } from './knowledge/store';
import type { SecretBox } from './secret-box';
import type { DeltaHub } from './streams';
import type { Temporal } from './temporal';
import { createAccountService } from './accounts/service';
import { createActionService } from './actions/service';
import { createBotService } from './bots/service';
import { createPairingService } from './builder/pairing';
import { createBuilderService } from './builder/service';
import { createConversationService } from './conversations/service';
import { createCreditService } from './credits/service';
import { createKnowledgeService } from './knowledge/service';
import { mediaBucketOf } from './media/bucket';
import { createMediaService } from './media/service';
import { createNotificationService } from './notifications/service';
import { createRunService } from './runs/service';
import { createScanService } from './scans/service';
import { createTriggerService } from './triggers/service';
import { createWidgetService } from './widget/service';

/** What the services run on; built once per process (API, worker, agentctl) and shared by every surface. */
export interface ServiceDeps {
  config: Pick<
    Config,
    | 'LLM_TURN_TIMEOUT_MS'
    | 'TRIGGER_MIN_INTERVAL_SECONDS'
    | 'SSRF_ALLOW_LOOPBACK'
    | 'OPENAI_API_KEY'
    | 'BUILDER_QUEUE_WAIT_MS'
    | 'MEDIA_STORE'
    | 'MEDIA_S3_ENDPOINT'
    | 'MEDIA_S3_BUCKET'
    | 'MEDIA_S3_REGION'
    | 'MEDIA_S3_ACCESS_KEY_ID'
    | 'MEDIA_S3_SECRET_ACCESS_KEY'
  >;
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  /** API processes: the answers and stream fragments the worker announces (Postgres LISTEN). */
  deltaHub?: DeltaHub;
  /** Embeds knowledge on write when embeddings are on. */
  embed?: Embedder;
}

/**
 * One service per resource (DESIGN.md, Who owns what): each owns its SQL, its Temporal calls and the mapping of its
 * failures to API errors. Routes, the builder's tools, the widget, the dashboard and agentctl all call these.
 */
export function createServices(deps: ServiceDeps) {
  const { db, temporal, secrets, config } = deps;
  // Attached images: in Postgres, or in the bucket MEDIA_STORE=s3 names.
  const media = createMediaService({ db, bucket: mediaBucketOf(config) });
  return {
    accounts: createAccountService({ db, secrets }),
    actions: createActionService({ db, temporal }),
    bots: createBotService({ db, secrets }),
    builder: createBuilderService({
      db,
      temporal,
      secrets,
      llmConfigured: Boolean(config.OPENAI_API_KEY),
      queueWaitMs: config.BUILDER_QUEUE_WAIT_MS,
    }),
    conversations: createConversationService({
      db,
      temporal,
      secrets,
      turnTimeoutMs: config.LLM_TURN_TIMEOUT_MS,
      deltaHub: deps.deltaHub,
      media,
    }),
    credits: createCreditService({ db }),
    knowledge: createKnowledgeService({ db, embed: deps.embed }),
    media,
    notifications: createNotificationService({ db }),
    pairing: createPairingService({ db, secrets }),
    runs: createRunService({ db, temporal }),
    scans: createScanService({ db, temporal, allowLoopback: config.SSRF_ALLOW_LOOPBACK }),
    widget: createWidgetService({ db, secrets }),
    triggers: createTriggerService({
      db,
      temporal,
      secrets,
      turnTimeoutMs: config.LLM_TURN_TIMEOUT_MS,
      minIntervalSeconds: config.TRIGGER_MIN_INTERVAL_SECONDS,
    }),
  };
}

export type Services = ReturnType<typeof createServices>;
