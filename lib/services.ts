import type { Config } from './config';
import type { Db } from './db';
import type { Embedder } from './knowledge/store';
import type { SecretBox } from './secret-box';
import type { DeltaHub } from './streams/listener';
import type { Temporal } from './temporal';
import { createAccountService, createTeamService } from './accounts/service';
import { createPasswordHasher } from './passwords';
import type { Logger } from './logger';
import { createMailer } from './mailer';
import { createOutbox } from './outbox';
import { createActionService } from './actions/service';
import { createStripeProvider, parsePrices } from './billing/payments';
import { createBillingService } from './billing/service';
import { createBotService } from './bots/service';
import { createModelCatalogue } from './billing/models';
import { createPairingService } from './builder/pairing';
import { createBuilderService } from './builder/service';
import { createCheckService } from './checks/service';
import { createConversationService } from './conversations/service';
import { createCreditService } from './credits/service';
import { createDeliveryService } from './deliveries/service';
import { createKnowledgeService } from './knowledge/service';
import { createReportsService } from './reports/service';
import { mediaBucketOf } from './media/bucket';
import { createMediaService } from './media/service';
import { createNotificationService } from './notifications/service';
import { createRunService } from './runs/service';
import { createScanService } from './scans/service';
import { createTriggerService } from './triggers/service';
import { createWidgetService } from './widget/service';
import { createAssignmentService } from './inbox/assignment';
import { createSavedReplyService } from './inbox/saved-replies';

/** What the services run on; built once per process (API, worker, agentctl) and shared by every surface. */
export interface ServiceDeps {
  config: Pick<
    Config,
    | 'LLM_TURN_TIMEOUT_MS'
    | 'LLM_MODEL'
    | 'LLM_MODELS'
    | 'MEDIA_RETENTION_DAYS'
    | 'TRIGGER_MIN_INTERVAL_SECONDS'
    | 'WEBHOOK_RETRY_FIRST_MS'
    | 'SSRF_ALLOW_LOOPBACK'
    | 'OPENAI_API_KEY'
    | 'BUILDER_QUEUE_WAIT_MS'
    | 'MEDIA_STORE'
    | 'MEDIA_S3_ENDPOINT'
    | 'MEDIA_S3_BUCKET'
    | 'MEDIA_S3_REGION'
    | 'MEDIA_S3_ACCESS_KEY_ID'
    | 'MEDIA_S3_SECRET_ACCESS_KEY'
    | 'SMTP_URL'
    | 'SMTP_FROM'
    | 'PASSWORD_HASH_CONCURRENCY'
    | 'PASSWORD_HASH_QUEUE'
    | 'LOGIN_SLOWDOWN_SECONDS'
    | 'STRIPE_SECRET_KEY'
    | 'STRIPE_WEBHOOK_SECRET'
    | 'STRIPE_PRICES'
    | 'STRIPE_API_BASE'
  >;
  /** Where e-mails go when SMTP is not configured (a development set-up): the process's log. */
  logger?: Logger;
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  /** API processes: the answers and stream fragments the worker announces (Postgres LISTEN). */
  deltaHub?: DeltaHub;
  /** Embeds knowledge on write when embeddings are on. */
  embed?: Embedder;
}

/**
 * One service per resource (docs/architecture.md, Who owns what): each owns its SQL, its Temporal calls and the mapping of its
 * failures to API errors. Routes, the builder's tools, the widget, the dashboard and agentctl all call these.
 */
export function createServices(deps: ServiceDeps) {
  const { db, temporal, secrets, config } = deps;
  // Attached images: in Postgres, or in the bucket MEDIA_STORE=s3 names.
  const media = createMediaService({ db, bucket: mediaBucketOf(config), retentionDays: config.MEDIA_RETENTION_DAYS });
  // The models agents may use on each plan, and their credit weights.
  const models = createModelCatalogue({ defaultModel: config.LLM_MODEL, spec: config.LLM_MODELS });
  // Password resets and invitations: by SMTP, or (without SMTP_URL) into the log with their links.
  const warn = (fields: Record<string, unknown>, message: string) =>
    deps.logger
      ? deps.logger.warn(fields, message)
      : process.stderr.write(`${JSON.stringify({ ...fields, msg: message })}\n`);
  const outbox = createOutbox(createMailer(config.SMTP_URL, config.SMTP_FROM), warn);
  const triggers = createTriggerService({
    db,
    temporal,
    secrets,
    turnTimeoutMs: config.LLM_TURN_TIMEOUT_MS,
    minIntervalSeconds: config.TRIGGER_MIN_INTERVAL_SECONDS,
  });
  const scans = createScanService({ db, temporal, allowLoopback: config.SSRF_ALLOW_LOOPBACK });
  // Originals of uploaded files: in Postgres, or in the same bucket as attached images.
  const knowledge = createKnowledgeService({ db, temporal, embed: deps.embed, bucket: mediaBucketOf(config) });
  // Accounts and the team share one set of deps (lib/accounts/deps.ts).
  const accountDeps = {
    db,
    secrets,
    outbox,
    passwords: createPasswordHasher({
      concurrency: config.PASSWORD_HASH_CONCURRENCY,
      queue: config.PASSWORD_HASH_QUEUE,
    }),
    loginSlowdownSeconds: config.LOGIN_SLOWDOWN_SECONDS,
    warn,
  };
  return {
    accounts: createAccountService(accountDeps),
    team: createTeamService(accountDeps),
    actions: createActionService({ db, temporal }),
    billing: createBillingService({ db, payments: paymentProviderOf(config) }),
    bots: createBotService({
      db,
      secrets,
      models,
      beforeDelete: async (botId) => {
        await triggers.removeAllOfBot(botId);
        await scans.stopAllOfBot(botId);
        await media.deleteForBot(botId);
        await knowledge.files.deleteForBot(botId);
      },
    }),
    builder: createBuilderService({
      db,
      temporal,
      secrets,
      llmConfigured: Boolean(config.OPENAI_API_KEY),
      queueWaitMs: config.BUILDER_QUEUE_WAIT_MS,
      deltaHub: deps.deltaHub,
    }),
    checks: createCheckService({ db, temporal }),
    conversations: createConversationService({
      db,
      temporal,
      secrets,
      turnTimeoutMs: config.LLM_TURN_TIMEOUT_MS,
      deltaHub: deps.deltaHub,
      media,
    }),
    credits: createCreditService({ db }),
    deliveries: createDeliveryService({ db, temporal, schedule: { firstRetryMs: config.WEBHOOK_RETRY_FIRST_MS } }),
    knowledge,
    media,
    models,
    notifications: createNotificationService({ db }),
    savedReplies: createSavedReplyService({ db }),
    assignment: createAssignmentService({ db }),
    pairing: createPairingService({ db, secrets }),
    reports: createReportsService({ db, knowledge }),
    runs: createRunService({ db, temporal }),
    scans,
    widget: createWidgetService({
      db,
      secrets,
      onError: (err) => warn({ err: String(err) }, 'a widget sighting could not be written'),
    }),
    triggers,
  };
}

export type Services = ReturnType<typeof createServices>;

/** Stripe when its three settings are there (lib/config.ts checks they come together), else none. */
function paymentProviderOf(config: ServiceDeps['config']) {
  if (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET || !config.STRIPE_PRICES) return null;
  return createStripeProvider({
    secretKey: config.STRIPE_SECRET_KEY,
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    prices: parsePrices(config.STRIPE_PRICES),
    apiBase: config.STRIPE_API_BASE,
  });
}
