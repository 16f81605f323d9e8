import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { type Config, ConfigError, temporalTlsProblems } from './config';
import { isUnavailableError } from './errors';

/**
 * The search attributes the platform's workflows set, name → type, from temporal-config/search-attributes.json: the
 * dev server registers them at start, the worker checks (and adds) them in its namespace.
 */
export function searchAttributes(): Record<string, string> {
  const file = path.join(__dirname, '..', 'temporal-config', 'search-attributes.json');
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
}

export interface Temporal {
  connection: Connection;
  client: Client;
  taskQueue: string;
  namespace: string;
  /** The Temporal Web UI, when one is configured (TEMPORAL_UI_URL). */
  uiUrl?: string;
}

export type TemporalConfig = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_NAMESPACE'
  | 'TEMPORAL_TASK_QUEUE'
  | 'TEMPORAL_UI_URL'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CERT_PATH'
  | 'TEMPORAL_TLS_KEY_PATH'
  | 'TEMPORAL_TLS_CA_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

/**
 * How every process reaches Temporal: the address, TLS (with the mTLS certificate pair when its paths are set; a
 * self-hosted server's own CA and certificate name when given) and the API key (Temporal Cloud). The one source for
 * the API's and agentctl's client connection and the worker's native connection, whose options have the same shape.
 * TLS settings that would do less than they say (half a pair, TLS files without TLS) are refused, as at start-up.
 */
export function temporalConnectionOptions(config: TemporalConfig) {
  const problems = temporalTlsProblems(config);
  if (problems.length) throw new ConfigError(problems);
  const tls = config.TEMPORAL_TLS
    ? {
        clientCertPair:
          config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
            ? { crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH), key: readFileSync(config.TEMPORAL_TLS_KEY_PATH) }
            : undefined,
        ...(config.TEMPORAL_TLS_CA_PATH ? { serverRootCACertificate: readFileSync(config.TEMPORAL_TLS_CA_PATH) } : {}),
        ...(config.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME } : {}),
      }
    : undefined;
  return {
    address: config.TEMPORAL_ADDRESS,
    tls,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/** The server's words for an operation sent to a run that is closing (continuing as new, ending). */
const WORKFLOW_CLOSING = /workflow is closing/i;

/**
 * The workflow's current run is closing: a plain update to it is refused (RESOURCE_EXHAUSTED). Update-with-Start
 * reaches the run that follows (lib/conversations/sessions.ts, updateConversation).
 */
export function isWorkflowClosing(err: unknown): boolean {
  return saidByServer(err, WORKFLOW_CLOSING);
}

/** The server's words for an update refused because the workflow's task has failed twice or more in a row. */
const WORKFLOW_TASK_FAILING = /Workflow Task in failed state/i;

/**
 * The server refuses updates (WorkflowNotReady) while the workflow's task keeps failing: timed out on a worker short
 * of CPU, or a bug. Nothing of the update was admitted; once a task succeeds the same update is accepted
 * (lib/conversations/sessions.ts sends it again for a while).
 */
export function isWorkflowTaskFailing(err: unknown): boolean {
  return saidByServer(err, WORKFLOW_TASK_FAILING);
}

/** Whether the error, or one of its causes, carries the server's words (its message or its gRPC details). */
function saidByServer(err: unknown, words: RegExp): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { message, details } = e as { message?: unknown; details?: unknown };
    if (words.test(String(details ?? '')) || words.test(String(message ?? ''))) return true;
  }
  return false;
}

const retryOptions = defaultGrpcRetryOptions({ maxAttempts: 5 });

/**
 * How the API and agentctl's client behave when Temporal is down (docs/decisions/024-temporal-outage.md):
 * - a call retries an unavailable server 5 times over about 2 s (the SDK's default is 10 times over about 20 s), so
 *   a new chat during an outage is answered 503 in seconds instead of hanging; a turn already running is not lost
 *   by it (lib/conversations/turn.ts waits for its answer);
 * - the channel tries to reconnect every 250 ms at first and at least every 2 s (gRPC's default backs off to 2
 *   minutes), so the API reaches Temporal again within seconds of its return.
 */
const OUTAGE_BEHAVIOUR = {
  interceptors: [
    makeGrpcRetryInterceptor({
      ...retryOptions,
      // A run that is closing refuses an update with RESOURCE_EXHAUSTED, which the SDK retries after a second; the
      // caller goes to the run that follows at once instead.
      retryableDecider: (attempt, status) =>
        !WORKFLOW_CLOSING.test(status.details ?? '') && retryOptions.retryableDecider(attempt, status),
    }),
  ],
  channelArgs: {
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.min_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 2_000,
  },
};

/** gRPC's connectivity state READY (`connectivityState.READY` of @grpc/grpc-js): a connection is up. */
const READY = 2;

/**
 * Whether the client holds a live connection to Temporal right now. A connection the server closed (it stopped or
 * restarted) is not one: gRPC notices the close and the channel leaves READY at once. The SDK keeps its gRPC client
 * protected; read without it (another SDK shape), the answer is false, which keeps every caller's cautious path —
 * and test/http/temporal-outage.test.ts (a turn lost by a stopping server is sent again) fails, which says so.
 */
export function temporalConnected(t: Pick<Temporal, 'connection'>): boolean {
  return channelState(t.connection, false) === READY;
}

/** The gRPC channel's connectivity state; with `connect`, an idle channel starts connecting. */
function channelState(connection: Connection, connect: boolean): number | undefined {
  const grpcClient = (connection as unknown as { client?: { getChannel?: () => unknown } }).client;
  const channel = grpcClient?.getChannel?.() as { getConnectivityState?: (connect: boolean) => number } | undefined;
  return channel?.getConnectivityState?.(connect);
}

export interface TemporalReturnWatch {
  stop(): Promise<void>;
}

/**
 * Calls `onReturn` each time Temporal answers again after having been out of reach for at least `minOutageMs`. It
 * watches a connection of its own that retries every 500 ms while the server is away (a connection attempt, no
 * request), so a return is seen within about half a second; a short drop (an idle connection the server closed) is
 * not an outage. Outages are counted only after a first connection, so a slow start is not one either.
 */
export function watchTemporalReturn(
  config: TemporalConfig,
  opts: { minOutageMs: number; onReturn: (outageMs: number) => void; everyMs?: number },
): TemporalReturnWatch {
  const connection = Connection.lazy({
    ...temporalConnectionOptions(config),
    channelArgs: {
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.min_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 500,
    },
  });
  let connectedOnce = false;
  let awaySince: number | undefined;
  const timer = setInterval(() => {
    const up = channelState(connection, true) === READY;
    if (!up) {
      if (connectedOnce) awaySince ??= Date.now();
      return;
    }
    connectedOnce = true;
    if (awaySince === undefined) return;
    const outageMs = Date.now() - awaySince;
    awaySince = undefined;
    if (outageMs >= opts.minOutageMs) opts.onReturn(outageMs);
  }, opts.everyMs ?? 250);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await connection.close();
    },
  };
}

/**
 * One Temporal client per process. The API and agentctl connect lazily so they start (and the API answers `/readyz`
 * 503) while Temporal is still coming up; the worker connects eagerly because it cannot do anything without it.
 */
export async function createTemporal(config: TemporalConfig, opts: { lazy?: boolean } = {}): Promise<Temporal> {
  const options = { ...temporalConnectionOptions(config), ...OUTAGE_BEHAVIOUR };
  const connection = opts.lazy ? Connection.lazy(options) : await Connection.connect(options);
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  return {
    connection,
    client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    namespace: config.TEMPORAL_NAMESPACE,
    uiUrl: config.TEMPORAL_UI_URL,
  };
}

/**
 * Link to one workflow execution in the Temporal Web UI, for ops staff and the run log; null without a UI: a link to
 * an address where no UI runs is worse than none.
 */
export function workflowUiUrl(t: Pick<Temporal, 'uiUrl' | 'namespace'>, workflowId: string): string | null {
  if (!t.uiUrl) return null;
  return `${t.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(t.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** Temporal answers, but the namespace this platform is configured for does not exist there. */
export class NamespaceMissingError extends Error {
  constructor(readonly namespace: string) {
    super(
      `Temporal namespace "${namespace}" does not exist; create it with ` +
        `\`temporal operator namespace create --namespace ${namespace}\` (or set TEMPORAL_NAMESPACE)`,
    );
    this.name = 'NamespaceMissingError';
  }
}

const GRPC_NOT_FOUND = 5;

/**
 * Resolves when Temporal answers and knows our namespace; rejects after `timeoutMs`, or with `NamespaceMissingError`
 * (every workflow call would fail): the readiness probe, `agentctl status` and the worker's start.
 */
export async function pingTemporal(t: Pick<Temporal, 'connection' | 'namespace'>, timeoutMs = 2_000): Promise<void> {
  try {
    await t.connection.withDeadline(Date.now() + timeoutMs, () =>
      t.connection.workflowService.describeNamespace({ namespace: t.namespace }),
    );
  } catch (err) {
    if ((err as { code?: number }).code === GRPC_NOT_FOUND) throw new NamespaceMissingError(t.namespace);
    throw err;
  }
}

/** The server's words for an update it dropped unseen: no workflow code ran for it, so sending it again is safe. */
const UNPROCESSED_UPDATE = /wasn't processed by worker|was not processed by (?:the )?worker/i;

function isUnprocessedUpdate(err: unknown): boolean {
  return saidByServer(err, UNPROCESSED_UPDATE);
}

/**
 * How long an update refused because the workflow's task keeps failing is sent again, once a second: one workflow
 * task timeout (Temporal's default, 10 s), time for a worker short of CPU to get a task through.
 */
const FAILING_TASK_RESEND_MS = 10_000;

/**
 * Sends an update again when the server refused it unseen — nothing of it ran, and our chat updates carry their
 * message id as update id, so a resend is safe:
 * - no worker took it up: under many concurrent updates to one workflow whose tasks run local activities, the server
 *   (dev server 1.29 with SDK 1.24 here) sometimes drops one that way; sent again at once, a few times;
 * - the workflow's task has failed twice or more in a row (`isWorkflowTaskFailing`): sent again every second for up
 *   to 10 s, then the refusal is the caller's.
 * Any other failure is the caller's.
 */
export async function resendUnprocessedUpdate<T>(
  send: () => Promise<T>,
  opts: { attempts?: number; failingTaskForMs?: number; failingTaskEveryMs?: number } = {},
): Promise<T> {
  const failingTaskUntil = Date.now() + (opts.failingTaskForMs ?? FAILING_TASK_RESEND_MS);
  const every = opts.failingTaskEveryMs ?? 1_000;
  for (let attempt = 1; ;) {
    try {
      return await send();
    } catch (err) {
      if (isWorkflowTaskFailing(err) && Date.now() + every <= failingTaskUntil) {
        await new Promise((r) => setTimeout(r, every));
        continue;
      }
      if (attempt >= (opts.attempts ?? 4) || !isUnprocessedUpdate(err)) throw err;
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt++));
    }
  }
}

/**
 * Waits for what a started workflow gives (its result, an update's result) through an outage of Temporal: the
 * workflow goes on in its worker while the server is away, so a wait that loses the server asks again every second
 * until `until` instead of calling the work failed (docs/decisions/024-temporal-outage.md). Any other failure,
 * and an outage that outlasts `until`, is thrown.
 */
export async function waitThroughOutage<T>(wait: () => Promise<T>, until: number, everyMs = 1_000): Promise<T> {
  for (;;) {
    try {
      return await wait();
    } catch (err) {
      if (!isUnavailableError(err) || Date.now() + everyMs > until) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
