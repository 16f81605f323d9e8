import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../activities';
import type { SiteScanDeps } from '../activities/site-scan';
import { embeddingModelOf, publicAddress, type Config } from '../lib/config';
import type { Db } from '../lib/db';
import { createSafeFetch } from '../lib/http/safe-fetch';
import { retrievePassages } from '../lib/knowledge/retrieve';
import type { Embedder } from '../lib/knowledge/store';
import { LIMITS } from '../lib/limits';
import { LlmError, createOpenAiLlm } from '../lib/llm';
import { createMailer } from '../lib/mailer';
import { type Temporal, temporalConnectionOptions } from '../lib/temporal';
import { createSecretBox } from '../lib/secret-box';
import { createDeltaPublisher } from '../lib/streams/publisher';
import { createServices } from '../lib/services';

/** A question's embedding that takes longer is given up: the turn goes on with full-text retrieval alone. */
const QUERY_EMBEDDING_TIMEOUT_MS = 5_000;
/** One embedding call of a scanned page; below the crawl activity's heartbeat timeout, so a hang is a retry. */
const EMBED_CALL_TIMEOUT_MS = 30_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LlmError('llm_overloaded', 'The embedding model did not answer in time')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The activity's logger when called inside one (it carries the workflow and run ids), else nothing. */
function warn(message: string, meta: Record<string, unknown>): void {
  try {
    Context.current().log.warn(message, meta);
  } catch {
    // Not inside an activity (a test calling retrieve directly): nothing to attach the line to.
  }
}

/**
 * The one place real clients are built for activities (STYLE.md: activities get their deps injected). With
 * embeddings on (OPENAI_API_KEY and EMBEDDING_MODEL), `retrieve` embeds the question with the model the knowledge
 * was written with and ranks by full text and cosine together, and site scans embed the pages they index
 * (`embed` reaches `createSiteScanActivities`, which `createActivities` hands these same deps).
 */
export function buildActivityDeps(
  config: Config,
  db: Db,
  temporal: Temporal,
): ActivityDeps & Pick<SiteScanDeps, 'embed'> {
  const secrets = createSecretBox(config.SECRET_ENCRYPTION_KEY);
  const services = createServices({ config, db, temporal, secrets });
  const embeddingModel = embeddingModelOf(config);
  const llm = config.OPENAI_API_KEY
    ? createOpenAiLlm({
        apiKey: config.OPENAI_API_KEY,
        baseURL: config.OPENAI_BASE_URL,
        model: config.LLM_MODEL,
        embeddingModel,
        // Reading the model faster than the publisher sends is work nobody sees: the text read within half a window
        // still goes out with that window or the next.
        readRestMs: config.STREAM_COALESCE_MS / 2,
      })
    : null;
  const rawEmbed = embeddingModel ? llm?.embed : undefined;
  const embed: Embedder | undefined = rawEmbed && ((texts) => withTimeout(rawEmbed(texts), EMBED_CALL_TIMEOUT_MS));

  const retrieve = async (botId: string, query: string) => {
    let queryEmbedding: number[] | undefined;
    if (rawEmbed) {
      try {
        [queryEmbedding] = await withTimeout(rawEmbed([query]), QUERY_EMBEDDING_TIMEOUT_MS);
      } catch (err) {
        // Full text alone still answers; the line names the failure kind, never the key or the question.
        warn('query embedding failed: full-text retrieval only', {
          botId,
          embeddingModel,
          kind: err instanceof LlmError ? err.kind : 'unclassified',
          reason: err instanceof LlmError ? err.message : String((err as Error)?.name),
        });
      }
    }
    return retrievePassages(db, botId, query, { limit: LIMITS.passagesPerTurn, queryEmbedding });
  };

  return {
    db,
    llm,
    defaultModel: config.LLM_MODEL,
    models: services.models,
    retrieve,
    embed,
    knowledgeFiles: services.knowledge.files,
    deltas: createDeltaPublisher(db, {
      coalesceMs: config.STREAM_COALESCE_MS,
      retryForMs: config.STORAGE_OUTAGE_RETRY_MS,
    }),
    storageRetryMs: config.STORAGE_OUTAGE_RETRY_MS,
    deliverySchedule: { firstRetryMs: config.WEBHOOK_RETRY_FIRST_MS },
    fetch: createSafeFetch({
      allowLoopback: config.SSRF_ALLOW_LOOPBACK,
      userAgent: 'AgentPlatform/1.0 (+webhooks; crawler)',
    }),
    secrets,
    mailer: createMailer(config.SMTP_URL, config.SMTP_FROM),
    // Activities reach Temporal only through the services that own the resources (health reports, Schedules,
    // decisions), injected here: activity modules import no service that starts workflows.
    triggers: services.triggers,
    credits: services.credits,
    builder: {
      services,
      overview: services.builder.overview,
      secrets,
      publicBaseUrl: publicAddress(config),
      log: { warn: (obj, msg) => warn(msg, obj as Record<string, unknown>) },
      stepTimeoutMs: config.LLM_TURN_TIMEOUT_MS,
    },
    periodic: {
      grantIncludedCredits: () => services.billing.grantIncludedCredits(),
      tallyConversations: () => services.billing.tallyConversations(),
      sweepPairings: () => services.pairing.sweep(),
      expireMedia: () => services.media.expire(),
    },
    convergence: {
      resyncTriggerSchedules: () => services.triggers.resyncStale(),
      resyncScanSchedules: () => services.scans.resyncStale(),
      redeliverApprovals: () => services.actions.redeliverStale(),
    },
  };
}

/** The worker's own connection to Temporal: the shared options (address, TLS, API key) and its compression. */
export function workerConnectionOptions(config: Config) {
  return { ...temporalConnectionOptions(config), grpcCompression: { codec: config.TEMPORAL_GRPC_COMPRESSION } };
}

/**
 * The SDK's metrics for Prometheus at WORKER_METRICS_ADDRESS, if set (slots in use and free, schedule-to-start and
 * execution latencies: what says a worker is short of CPU or slots), named as Prometheus expects: counters end in
 * `_total`, durations are in seconds and say so.
 */
export function workerMetrics(config: Pick<Config, 'WORKER_METRICS_ADDRESS'>) {
  if (!config.WORKER_METRICS_ADDRESS) return {};
  return {
    metrics: {
      prometheus: {
        bindAddress: config.WORKER_METRICS_ADDRESS,
        countersTotalSuffix: true,
        unitSuffix: true,
        useSecondsForDurations: true,
      },
    },
  };
}

/** The worker's slots, pollers and cache, from configuration (WORKER_*). */
export function workerCapacity(config: Config) {
  return {
    maxConcurrentWorkflowTaskExecutions: config.WORKER_WORKFLOW_TASK_SLOTS,
    maxConcurrentLocalActivityExecutions: config.WORKER_LOCAL_ACTIVITY_SLOTS,
    maxConcurrentActivityTaskExecutions: config.WORKER_ACTIVITY_SLOTS,
    maxConcurrentWorkflowTaskPolls: Math.min(config.WORKER_WORKFLOW_TASK_POLLS, config.WORKER_WORKFLOW_TASK_SLOTS),
    ...(config.WORKER_MAX_CACHED_WORKFLOWS === undefined
      ? {}
      : { maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS }),
  };
}
