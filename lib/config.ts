import { parsePrices } from './billing/payments';
import { z } from 'zod';
import { parseModelList } from './billing/models';
import { LIMITS, type RateGroup, type RateLimits } from './limits';

/**
 * The one place the environment is read. Parsed once at start-up; a bad value stops the process with a message
 * naming every variable that is wrong (see `loadConfig`).
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);

/** A rate group's requests a minute per key + client address, the contract's limit unless set (`rateLimitsOf`). */
const rateLimit = (group: keyof RateLimits) =>
  z.coerce.number().int().min(1).max(1_000_000).default(LIMITS.rateGroups[group]);

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('0.0.0.0'),
  PORT: port.default(8080),
  /**
   * Where the API is reached from outside (links in e-mails, trigger addresses, media URLs). Required in production:
   * a link is never built from the request's Host (docs/decisions/103-links-from-configuration.md).
   */
  PUBLIC_BASE_URL: z.url().optional(),
  /** Where the dashboard's pages are served when not by the API itself (its origin may send cookie writes). */
  DASHBOARD_URL: z.url().optional(),
  /** Trust X-Forwarded-For/-Proto from a load balancer in front of the API (client IP for rate limits, https). */
  TRUST_PROXY: bool.default(false),
  /**
   * How many proxies in front of the API append to X-Forwarded-For: the client is the entry that many from the
   * right. Entries further left are whatever the client sent and are never trusted.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
  /** When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Requests a minute per key and client address (contract, Limits), by group: the contract's 60 dialogue and 240 reads, and
   * the widget's 60 / 600 / 10 (docs/decisions/076-widget-callers.md) unless set. Raise them for callers who send more
   * from one address than a visitor does: a server-side integration, a load test
   * (docs/decisions/148-user-path-load-benchmark.md).
   */
  RATE_LIMIT_DIALOGUE: rateLimit('dialogue'),
  RATE_LIMIT_READS: rateLimit('reads'),
  RATE_LIMIT_WIDGET_DIALOGUE: rateLimit('widgetDialogue'),
  RATE_LIMIT_WIDGET_READS: rateLimit('widgetReads'),
  RATE_LIMIT_WIDGET_UPLOADS: rateLimit('widgetUploads'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * The API's one connection that LISTENs for stream fragments and answers (lib/streams/listener.ts). LISTEN needs a session of
   * its own: a direct or session-pooled address, never a transaction-mode pooler (which would hand the session to
   * someone else and lose the notifications). Default: DATABASE_URL (`listenUrlOf`).
   */
  DATABASE_LISTEN_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),

  TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('agent-platform-v1'),
  /**
   * The Temporal Web UI the dashboard's run log links each run to. Unset: runs carry no link (`workflow_url` null);
   * `npm start` sets it to its dev server's UI, and a production cluster runs its UI apart (temporal-config/README.md).
   */
  TEMPORAL_UI_URL: z.url().optional(),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  /** A self-hosted server's certificate authority (PEM), when it is not one the system trusts. */
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  /** The name the server's certificate is for, when it differs from TEMPORAL_ADDRESS's host (SNI and verification). */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  /**
   * The worker's gRPC compression towards Temporal (the SDK's default is gzip). None by default: the worker and the
   * server are near each other, where compressing every workflow task's call only costs CPU on both sides
   * (docs/decisions/119-streamed-turn-cpu.md); `gzip` for a slow link.
   */
  TEMPORAL_GRPC_COMPRESSION: z.enum(['none', 'gzip']).default('none'),

  /** AES-256-GCM key (64 hex chars) for secrets the platform must be able to use again (signing secrets). */
  SECRET_ENCRYPTION_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)'),

  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /**
   * Models agents may use beyond the built-in catalogue (lib/billing/models.ts), or changes to it:
   * `name:weight[:plan|plan…]` entries separated by commas (`gpt-4o:20:pro|business,llama-3.3-70b:4`).
   */
  LLM_MODELS: z
    .string()
    .optional()
    .superRefine((spec, ctx) => {
      try {
        if (spec) parseModelList(spec);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  LLM_TURN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  /**
   * A worker flushes the pieces of every answer it is streaming at most once per this many milliseconds, in one
   * statement and one notification (a stream's first piece and its end at once): docs/decisions/015-stream-fragment-coalescing.md.
   * 100 ms is ten updates a second for a visitor, and a third less CPU per turn than one flush per token.
   */
  STREAM_COALESCE_MS: z.coerce.number().int().min(0).max(1000).default(100),
  /**
   * How long a turn in flight keeps retrying its database writes through a Postgres outage before it fails (at most
   * 30 s: the turn's local activity allows the model's budget plus 35 s).
   */
  STORAGE_OUTAGE_RETRY_MS: z.coerce.number().int().min(0).max(30_000).default(30_000),
  /**
   * How much one worker takes on at once (docs/decisions/112-worker-slots.md). A chat turn holds a workflow-task
   * slot and a local-activity slot while the model answers — seconds of waiting, little CPU — so the SDK's defaults
   * (40 workflow tasks) would cap a worker at ~40 turns in flight on an idle machine. CPU is the real limit.
   */
  WORKER_WORKFLOW_TASK_SLOTS: z.coerce.number().int().min(2).max(10_000).default(1000),
  WORKER_LOCAL_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(10_000).default(1000),
  WORKER_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Concurrent long polls for workflow tasks: enough for a burst of new conversations to be picked up at once. */
  WORKER_WORKFLOW_TASK_POLLS: z.coerce.number().int().min(2).max(200).default(20),
  /**
   * Workflows kept in the worker's memory between tasks (conversations in progress); beyond, they are replayed.
   * Default: the SDK's, from the heap size (about one per MiB of heap above 200 MiB).
   */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  /**
   * The Temporal UI's stack trace of a running workflow. Collecting it takes a source-mapped stack trace of every
   * promise a workflow makes, which was the largest CPU cost of a workflow task (docs/decisions/119-streamed-turn-cpu.md);
   * off unless set, read by the SDK's workflow thread through patches/.
   */
  WORKER_WORKFLOW_STACK_TRACES: z.enum(['true', 'false']).default('false'),
  /**
   * The SDK's deadlock guard on every call into a workflow's sandbox, which costs a thread started and joined per
   * call; by default the worker watches its workflow thread as a whole instead, and exits (code 70, naming the run)
   * when a workflow holds it past 5 s (docs/decisions/125-workflow-thread-deadlock-guard.md). Read by the SDK
   * through patches/.
   */
  WORKER_WORKFLOW_TIMEOUT_PER_CALL: z.enum(['true', 'false']).default('false'),
  /**
   * Where the worker serves its Temporal SDK metrics for Prometheus (`host:port`, `/metrics`): its slots in use, how
   * long tasks waited for it (schedule-to-start), how long they ran. Off unless set.
   */
  WORKER_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[^\s:[\]]+):\d{1,5}$/, 'host:port, e.g. 0.0.0.0:9464')
    .optional(),
  /** Embedding model at the same endpoint; with OPENAI_API_KEY, knowledge is embedded and retrieval is hybrid. */
  EMBEDDING_MODEL: z.string().min(1).optional(),

  /** Shortest interval of schedule and poll triggers; tests lower it to see runs within seconds. */
  /** A builder message queued behind a running turn of its conversation answers "busy" after this long. */
  BUILDER_QUEUE_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  TRIGGER_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /**
   * The wait before a failed webhook delivery's first retry; the next ones wait 5 and 25 times as long (contract, Delivery
   * rules 1: after 1, 5 and 25 s). Read by whoever starts a delivery (the worker for events, the API for "send
   * again"); the test stacks shorten it so a delivery given up is seen within a test.
   */
  WEBHOOK_RETRY_FIRST_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** smtp(s)://user:pass@host:port — e-mails notifications to the workspace owner when set. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  SMTP_FROM: z.string().default('Agent Platform <no-reply@localhost>'),

  /**
   * Paying for a plan in the dashboard (docs/decisions/092-paying-for-a-plan.md): Stripe Checkout when the secret key,
   * the webhook's signing secret and the plans' prices are set; without them plans are recorded by the platform's
   * operators (`agentctl billing plan`). STRIPE_PRICES: `starter:price_…,pro:price_…,business:price_…`.
   */
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_PRICES: z
    .string()
    .optional()
    .superRefine((spec, ctx) => {
      try {
        if (spec) parsePrices(spec);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  STRIPE_API_BASE: z.url().default('https://api.stripe.com'),

  /**
   * Where attached images are kept: `postgres` (default; in the database, shared by every replica, in its backups) or
   * `s3` (an S3-compatible bucket: AWS S3, MinIO, R2…; MEDIA_S3_* below).
   */
  MEDIA_STORE: z.enum(['postgres', 's3']).default('postgres'),
  /** `https://s3.eu-west-1.amazonaws.com`, `http://minio:9000`, …: path-style addressing, SigV4. */
  MEDIA_S3_ENDPOINT: z.url().optional(),
  MEDIA_S3_BUCKET: z.string().min(1).optional(),
  MEDIA_S3_REGION: z.string().min(1).default('us-east-1'),
  MEDIA_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  MEDIA_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Visitors' images are deleted this many days after they were sent (the maintenance schedule does it). */
  MEDIA_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),

  /**
   * Password hashes (argon2, 19 MiB each) one API process runs at once, and how many more may wait; beyond, sign-ins,
   * sign-ups and resets answer 503 at once (docs/decisions/105-bounded-password-hashing.md).
   */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).max(1000).default(32),
  /**
   * After 5 failed sign-ins an account is slowed down for this many seconds, doubling with each further failure up to
   * 15 minutes (docs/decisions/054-sign-in-limits.md).
   */
  LOGIN_SLOWDOWN_SECONDS: z.coerce.number().int().min(1).max(900).default(2),

  /** Outbound HTTP may reach loopback addresses. Tests set it; production never should. */
  SSRF_ALLOW_LOOPBACK: bool.default(false),
});

export type Config = z.infer<typeof configSchema>;

/** The embedding model when embeddings are on (both OPENAI_API_KEY and EMBEDDING_MODEL set), else undefined. */
export function embeddingModelOf(config: Pick<Config, 'OPENAI_API_KEY' | 'EMBEDDING_MODEL'>): string | undefined {
  return config.OPENAI_API_KEY && config.EMBEDDING_MODEL ? config.EMBEDDING_MODEL : undefined;
}

/** The rate limits in force (RATE_LIMIT_*), by group; a group not given is the contract's. */
export function rateLimitsOf(config: Partial<Pick<Config, (typeof RATE_LIMIT_SETTINGS)[RateGroup]>>): RateLimits {
  const limits = { ...LIMITS.rateGroups } as RateLimits;
  for (const [group, name] of Object.entries(RATE_LIMIT_SETTINGS) as [RateGroup, keyof typeof config][]) {
    limits[group] = config[name] ?? limits[group];
  }
  return limits;
}

const RATE_LIMIT_SETTINGS = {
  dialogue: 'RATE_LIMIT_DIALOGUE',
  reads: 'RATE_LIMIT_READS',
  widgetDialogue: 'RATE_LIMIT_WIDGET_DIALOGUE',
  widgetReads: 'RATE_LIMIT_WIDGET_READS',
  widgetUploads: 'RATE_LIMIT_WIDGET_UPLOADS',
} as const satisfies Record<RateGroup, string>;

/** Where the API LISTENs for stream fragments: DATABASE_LISTEN_URL, else DATABASE_URL. */
export function listenUrlOf(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_LISTEN_URL'>): string {
  return config.DATABASE_LISTEN_URL ?? config.DATABASE_URL;
}

/**
 * Where the API is reached from outside: PUBLIC_BASE_URL, else (development and tests only; production requires it)
 * `http://localhost:PORT`. Never the request's Host: a link built from it could point anywhere the sender says.
 */
export function publicAddress(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/** Where the dashboard's pages are, for links in e-mails: DASHBOARD_URL, else the API's own public address. */
export function dashboardAddress(config: Pick<Config, 'PUBLIC_BASE_URL' | 'DASHBOARD_URL' | 'PORT'>): string {
  return (config.DASHBOARD_URL ?? publicAddress(config)).replace(/\/+$/, '');
}

/** Settings that only mean something over TLS. */
const TEMPORAL_TLS_SETTINGS = [
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
  'TEMPORAL_TLS_CA_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;

/**
 * Temporal TLS settings that would silently do less than they say (docs/decisions/138-tls-settings-refused.md): a client
 * certificate without its key, or the key alone, would connect without the client certificate; a TLS file or server
 * name with TEMPORAL_TLS off would connect in plain text and ignore it. Each is a problem to refuse at start.
 */
export function temporalTlsProblems(
  config: Pick<Config, 'TEMPORAL_TLS' | (typeof TEMPORAL_TLS_SETTINGS)[number]>,
): string[] {
  const problems: string[] = [];
  if (config.TEMPORAL_TLS_CERT_PATH && !config.TEMPORAL_TLS_KEY_PATH) {
    problems.push(
      "TEMPORAL_TLS_KEY_PATH: is required with TEMPORAL_TLS_CERT_PATH (the client certificate's private key: both, or neither)",
    );
  }
  if (config.TEMPORAL_TLS_KEY_PATH && !config.TEMPORAL_TLS_CERT_PATH) {
    problems.push(
      'TEMPORAL_TLS_CERT_PATH: is required with TEMPORAL_TLS_KEY_PATH (the client certificate of that key: both, or neither)',
    );
  }
  if (!config.TEMPORAL_TLS) {
    for (const name of TEMPORAL_TLS_SETTINGS.filter((n) => config[n])) {
      problems.push(
        `${name}: is set but TEMPORAL_TLS is not true, so Temporal would be reached in plain text without it ` +
          `(set TEMPORAL_TLS=true, or unset ${name})`,
      );
    }
  }
  return problems;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings mean "unset" so that `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  if (result.data.NODE_ENV === 'production' && !result.data.PUBLIC_BASE_URL) {
    throw new ConfigError([
      'PUBLIC_BASE_URL: is required when NODE_ENV=production (the address links in e-mails and trigger addresses use)',
    ]);
  }
  const stripe = (['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_PRICES'] as const).filter(
    (n) => result.data[n],
  );
  if (stripe.length > 0 && stripe.length < 3) {
    throw new ConfigError(
      (['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_PRICES'] as const)
        .filter((n) => !result.data[n])
        .map((n) => `${n}: is required with ${stripe.join(' and ')} (all three, or none)`),
    );
  }
  const tls = temporalTlsProblems(result.data);
  if (tls.length) throw new ConfigError(tls);
  if (result.data.MEDIA_STORE === 's3') {
    const missing = (
      ['MEDIA_S3_ENDPOINT', 'MEDIA_S3_BUCKET', 'MEDIA_S3_ACCESS_KEY_ID', 'MEDIA_S3_SECRET_ACCESS_KEY'] as const
    )
      .filter((name) => !result.data[name])
      .map((name) => `${name}: is required when MEDIA_STORE=s3`);
    if (missing.length) throw new ConfigError(missing);
  }
  return result.data;
}

/** Parses `process.env`, or prints what is wrong and exits: the only acceptable reaction at start-up. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}
