import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { bootstrapWorkspace } from '../lib/accounts/service';
import type { Db, Queryable } from '../lib/db';
import { createSecretBox } from '../lib/secret-box';
import { startCluster } from '../stack/cluster';
import { type Platform, startPlatform } from '../stack/platform';
import { benchDataDir, keepLogs, removeBenchDataDir, type StopOptions } from './data-dir';
import { type ManagedProcess, freePort } from '../stack/processes';
import type { EmbeddedPostgres } from '../stack/postgres';
import { type TemporalDevServer, startTemporalDev } from '../stack/temporal-dev';

/**
 * A whole platform for a benchmark run, as the tests start it (embedded Postgres, Temporal dev server, a worker,
 * the API) with the fake OpenAI server answering at once, so what is measured is the platform's own overhead.
 */
/** The platform's settings for benchmarks: production mode, the fake model, tuning from the bench's environment. */
function benchEnv(fakeUrl: string, publicBaseUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PUBLIC_BASE_URL: publicBaseUrl,
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: fakeUrl,
    LLM_MODEL: 'fake-model',
    // The fake's directive models (`fake-pace-400-2000-4`…) on every plan.
    LLM_MODELS: 'fake-*:1',
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    DATABASE_POOL_SIZE: '20',
    // Tuning under test comes from the bench's own environment (`WORKER_WORKFLOW_TASK_SLOTS=40 npm run bench …`).
    ...tuningFromEnvironment(),
  };
}

/**
 * The production shape for a benchmark (stack/cluster.ts): a real Temporal server, `apis` replicas behind the
 * balancer (Caddy, a process of its own: role `balancer`), `workers` workers.
 */
/**
 * What the load benchmark's --fault can do to each shape of the platform, in its measured window (bench/load.ts):
 * - `worker-kill`: a worker killed (SIGKILL) and, as a supervisor would, a new one started at once;
 * - `worker-deploy`: a worker replaced as a rolling deploy does, the new one started first and the old one then
 *   stopped (SIGTERM: it stops polling and finishes what it holds within its grace time);
 * - `postgres`, `temporal`: the platform's database or Temporal stopped for a while and started again (the dev server
 *   then keeps its history in a file, so that its workflows outlive the restart; the real server's four services are
 *   stopped and started, their own database left running);
 * - `api-kill`: the first API replica behind the balancer killed and started again on its port.
 */
export const FAULTS = {
  single: ['worker-kill', 'worker-deploy', 'postgres', 'temporal'],
  cluster: ['worker-kill', 'api-kill', 'postgres', 'temporal'],
} as const;
export type FaultKind = (typeof FAULTS)[keyof typeof FAULTS][number];

/** Injects a fault (FAULTS) and resolves once the part is back; `downMs` is how long an outage lasts. */
export type InjectFault = (kind: FaultKind, downMs: number) => Promise<void>;

/** The first of `workers` still running, replaced by a new one from `start` (a `worker-kill` or `worker-deploy`). */
async function replaceWorker(
  workers: ManagedProcess[],
  start: () => Promise<ManagedProcess>,
  kind: 'worker-kill' | 'worker-deploy',
): Promise<void> {
  const old = workers.find((w) => w.child.exitCode === null && w.child.signalCode === null);
  if (kind === 'worker-kill') old?.child.kill('SIGKILL');
  await start();
  if (kind === 'worker-deploy') await old?.stop('SIGTERM');
}

/** The platform's database stopped for `downMs`, then started again on its folder and port. */
async function stopFor(postgres: EmbeddedPostgres, downMs: number): Promise<void> {
  await postgres.stop();
  await new Promise((r) => setTimeout(r, downMs));
  await postgres.restart();
}

function unsupported(kind: FaultKind, shape: keyof typeof FAULTS): never {
  throw new Error(`--fault ${kind} does not run on the ${shape === 'single' ? 'single-machine stack' : 'cluster'}`);
}

/**
 * The production shape for a benchmark (stack/cluster.ts): a real Temporal server, `apis` replicas behind the
 * balancer (Caddy, a process of its own: role `balancer`), `workers` workers.
 */
export async function startBenchCluster(opts: { apis: number; workers: number }): Promise<{
  url: string;
  env: Record<string, string>;
  fake: FakeOpenAI;
  injectFault: InjectFault;
  stop(opts?: StopOptions): Promise<void>;
}> {
  const dataDir = benchDataDir('agent-platform-bench-cluster-');
  const fake = await startFakeOpenAI();
  const port = await freePort();
  const cluster = await startCluster({
    dataDir,
    apis: opts.apis,
    workers: opts.workers,
    port,
    env: benchEnv(fake.url, `http://127.0.0.1:${port}`),
    quiet: !process.env.BENCH_VERBOSE,
    logDir: path.join(dataDir, 'logs'),
  });
  return {
    url: cluster.url,
    env: cluster.env,
    fake,
    async injectFault(kind, downMs) {
      if (kind === 'api-kill') await cluster.restartApi(0, 'SIGKILL');
      else if (kind === 'worker-kill') await replaceWorker(cluster.workers, cluster.addWorker, kind);
      else if (kind === 'postgres' && cluster.postgres) await stopFor(cluster.postgres, downMs);
      else if (kind === 'temporal' && cluster.temporal) await cluster.temporal.restart(downMs);
      else unsupported(kind, 'cluster');
    },
    async stop(stopOpts) {
      await cluster.stop();
      await fake.close();
      keepLogs(dataDir, stopOpts);
      removeBenchDataDir(dataDir);
    },
  };
}

/**
 * The platform as `npm start` runs it, for a benchmark: `workers` workers (one by default), and with `persistTemporal`
 * the dev server's history in a file (a `temporal` fault needs it).
 */
export async function startBenchStack(opts: { persistTemporal?: boolean; workers?: number } = {}): Promise<{
  platform: Platform;
  fake: FakeOpenAI;
  injectFault: InjectFault;
  stop(opts?: StopOptions): Promise<void>;
}> {
  const dataDir = benchDataDir('agent-platform-bench-');
  const fake = await startFakeOpenAI();
  const apiPort = await freePort();
  const temporalPort = await freePort();
  const platform = await startPlatform({
    dataDir,
    env: benchEnv(fake.url, `http://127.0.0.1:${apiPort}`),
    apiPort,
    postgresPort: await freePort(),
    temporalPort,
    persistTemporal: opts.persistTemporal ?? false,
    quiet: !process.env.BENCH_VERBOSE,
    logDir: path.join(dataDir, 'logs'),
  });
  const workers = [platform.worker];
  const startWorker = async () => {
    const w = await platform.startWorker();
    workers.push(w);
    return w;
  };
  for (let w = 1; w < (opts.workers ?? 1); w++) await startWorker();
  let restarted: TemporalDevServer | undefined;
  return {
    platform,
    fake,
    async injectFault(kind, downMs) {
      if (kind === 'worker-kill' || kind === 'worker-deploy') {
        await replaceWorker(workers, startWorker, kind);
      } else if (kind === 'postgres' && platform.postgres) {
        await stopFor(platform.postgres, downMs);
      } else if (kind === 'temporal' && opts.persistTemporal && platform.temporal) {
        await (restarted ?? platform.temporal).stop();
        await new Promise((r) => setTimeout(r, downMs));
        restarted = await startTemporalDev({
          port: temporalPort,
          dbFile: path.join(dataDir, 'temporal.db'),
          headless: true,
          quiet: true,
        });
      } else {
        unsupported(kind, 'single');
      }
    },
    async stop(stopOpts) {
      await platform.stop();
      await restarted?.stop();
      await fake.close();
      keepLogs(dataDir, stopOpts);
      removeBenchDataDir(dataDir);
    },
  };
}

/** WORKER_*, STREAM_COALESCE_MS and DATABASE_POOL_SIZE as set for the benchmark run, to compare settings. */
function tuningFromEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] =>
        e[1] !== undefined &&
        (e[0].startsWith('WORKER_') ||
          ['STREAM_COALESCE_MS', 'DATABASE_POOL_SIZE', 'TEMPORAL_GRPC_COMPRESSION'].includes(e[0])),
    ),
  );
}

/**
 * Rate limits are per key + IP and the benchmarks send everything with one key from one address: they measure the
 * path, not the limiter, so every window is kept at 1 (the upsert still happens on every request).
 */
export async function liftRateLimits(db: Queryable): Promise<void> {
  await db.query(
    `CREATE OR REPLACE FUNCTION bench_no_limits() RETURNS trigger AS $$ BEGIN NEW.count := 1; RETURN NEW; END $$ LANGUAGE plpgsql`,
  );
  await db.query(
    `DROP TRIGGER IF EXISTS bench_no_limits ON rate_windows;
     CREATE TRIGGER bench_no_limits BEFORE INSERT OR UPDATE ON rate_windows FOR EACH ROW EXECUTE FUNCTION bench_no_limits()`,
  );
}

/** A workspace whose quota and credits outlast any benchmark, with one bot. */
export function benchBot(db: Db, secretEncryptionKey: string) {
  return bootstrapWorkspace(db, createSecretBox(secretEncryptionKey), {
    monthlyConversationQuota: 1_000_000,
    initialCredits: 10_000_000,
  });
}
