import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../test/support/fake-openai';
import { withRuntimeEnv } from '../lib/runtime-env';
import { bootstrapWorkspace } from '../lib/accounts/service';
import type { Db, Queryable } from '../lib/db';
import { createSecretBox } from '../lib/secret-box';
import { startCluster } from '../stack/cluster';
import { type Platform, startPlatform } from '../stack/platform';
import { type ManagedProcess, freePort, startProcess, waitFor } from '../stack/processes';
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

/** The model in a process of its own (test/support/fake-openai.ts as a child), and what it has recorded. */
export interface ModelProcess {
  url: string;
  /** The requests it has received so far (GET /_control/requests). */
  requests(): Promise<RecordedRequest[]>;
  /** Forgets the requests recorded so far (POST /_control/reset). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

const ROOT = path.join(__dirname, '..');

/** Starts test/support/fake-openai.ts as a process of its own: its pacing timers and sockets off the load generator. */
export async function startModelProcess(logTo?: (line: string) => void): Promise<ModelProcess> {
  let url = '';
  const proc = startProcess(
    'model',
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'test', 'support', 'fake-openai.ts'), '--port', '0'],
    {
      cwd: ROOT,
      quiet: true,
      onLine(line) {
        logTo?.(line);
        if (!url && line.startsWith('{')) url = (JSON.parse(line) as { url: string }).url;
      },
    },
  );
  await waitFor('the model process', async () => url !== '', 60_000, proc.child);
  const control = new URL('/_control/', url).href;
  return {
    url,
    async requests() {
      const res = await fetch(`${control}requests`);
      return ((await res.json()) as { requests: RecordedRequest[] }).requests;
    },
    async reset() {
      await fetch(`${control}reset`, { method: 'POST' });
    },
    stop: () => proc.stop('SIGTERM', 5_000),
  };
}

/** Process ids under `pid` (children first-level and deeper), from /proc. Linux only. */
function descendants(pid: number): { pid: number; cmd: string }[] {
  const all: { pid: number; ppid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    const stat = processStat(d);
    if (!stat) continue;
    try {
      all.push({
        pid: Number(d),
        ppid: stat.ppid,
        cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' '),
      });
    } catch {
      // gone meanwhile
    }
  }
  const out: { pid: number; cmd: string }[] = [];
  const walk = (parent: number) => {
    for (const p of all.filter((q) => q.ppid === parent)) {
      out.push({ pid: p.pid, cmd: p.cmd });
      walk(p.pid);
    }
  };
  walk(pid);
  return out;
}

/**
 * The platform the way a user starts it: `npm start` as shipped (scripts/launch.sh: setup, then scripts/start.ts —
 * embedded Postgres, the Temporal dev server with its history in a file, a worker, the API), in a data folder of its
 * own and on free ports (PORT, EMBEDDED_PG_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT, DATA_DIR: its documented settings),
 * with the model in a process of its own. Everything else comes from this process's environment, as from a user's
 * shell: `NODE_ENV=production LOG_LEVEL=warn RATE_LIMIT_DIALOGUE=600 npm run bench -- load --user-path`; `defaults`
 * are settings a user would make for the benchmark's load, which the shell's environment overrides.
 */
export async function startUserPath(defaults: Record<string, string> = {}): Promise<{
  url: string;
  env: Record<string, string>;
  model: ModelProcess;
  stop(opts?: StopOptions): Promise<void>;
}> {
  const dataDir = benchDataDir('agent-platform-user-path-');
  const logs = path.join(dataDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const logFile = (name: string) => {
    const out = createWriteStream(path.join(logs, `${name}.log`));
    return { write: (line: string) => void out.write(`${line}\n`), close: () => new Promise((r) => out.end(r)) };
  };
  const modelLog = logFile('model');
  const model = await startModelProcess(modelLog.write);
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    // What a user would set for this load (the rate limits of a benchmark's one client), unless the shell says.
    ...defaults,
    ...process.env,
    // Everything on this machine: a database or Temporal of the shell's would not be the user path.
    DATABASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
    PORT: String(port),
    EMBEDDED_PG_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: model.url,
    // The model's paced directive models (`fake-pace-400-2000-4`…) on every plan.
    LLM_MODELS: process.env.LLM_MODELS ?? 'fake-*:1',
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
  };
  const startLog = logFile('npm-start');
  let running = false;
  const npm = startProcess('npm start', 'npm', ['start'], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    quiet: true,
    onLine(line) {
      startLog.write(line);
      if (line.includes('Agent Platform is running')) running = true;
    },
  });
  const stop = async (stopOpts?: StopOptions) => {
    // scripts/start.ts stops its parts in order on SIGTERM (npm would pass the signal on only to its shell).
    // It is waited for: npm may end first (its shell gone), with the parts still writing to the data folder.
    const start = descendants(npm.child.pid ?? 0).find((p) => p.cmd.includes('scripts/start.ts'));
    if (start) {
      process.kill(start.pid, 'SIGTERM');
      await waitFor('npm start to stop', async () => processStat(start.pid) === undefined, 60_000).catch(() =>
        process.kill(start.pid, 'SIGKILL'),
      );
    }
    await npm.stop('SIGTERM', 10_000);
    await model.stop();
    await Promise.all([startLog.close(), modelLog.close()]);
    keepLogs(dataDir, stopOpts);
    removeBenchDataDir(dataDir);
  };
  try {
    await waitFor('npm start', async () => running, 300_000, npm.child);
  } catch (err) {
    await stop({ keepLogsIn: path.join(__dirname, 'results', 'user-path-failed-logs') });
    throw err;
  }
  const runtime = withRuntimeEnv({}, path.join(dataDir, 'runtime.env')) as Record<string, string>;
  return { url: `http://127.0.0.1:${port}`, env: runtime, model, stop };
}

/**
 * The platform a request benchmark (chat, polling) measures: its own stack as the tests start it, every rate limit
 * lifted by a trigger; or with `userPath`, npm start as shipped (`startUserPath`) with `limits` raised as a user
 * would for one client sending the benchmark's load (`RATE_LIMIT_*`, unless the shell sets them).
 */
export async function startMeasuredPlatform(
  userPath: boolean,
  limits: Record<string, string>,
): Promise<{
  url: string;
  env: Record<string, string>;
  modelUrl: string;
  stop(): Promise<void>;
  ready(db: Db): Promise<void>;
}> {
  if (userPath) {
    const user = await startUserPath(limits);
    return { url: user.url, env: user.env, modelUrl: user.model.url, stop: () => user.stop(), ready: async () => {} };
  }
  const own = await startBenchStack();
  return {
    url: own.platform.apiUrl,
    env: own.platform.env,
    modelUrl: own.fake.url,
    stop: () => own.stop(),
    ready: (db) => liftRateLimits(db),
  };
}

export interface StopOptions {
  /** Copy the processes' logs here before the data folder goes (a run whose turns failed: what they said). */
  keepLogsIn?: string;
}

function keepLogs(dataDir: string, opts: StopOptions = {}): void {
  const logs = path.join(dataDir, 'logs');
  if (!opts.keepLogsIn || !existsSync(logs)) return;
  rmSync(opts.keepLogsIn, { recursive: true, force: true });
  cpSync(logs, opts.keepLogsIn, { recursive: true });
}

/**
 * A benchmark's data folder (Postgres, Temporal, logs), removed when its platform stops — or when the benchmark exits
 * without stopping it (interrupted: stack/processes.ts turns a signal into an exit and kills the children).
 */
const dataDirs = new Set<string>();
let removedOnExit = false;
function benchDataDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o755);
  dataDirs.add(dir);
  if (!removedOnExit) {
    removedOnExit = true;
    // Best effort: on the way out the services may still be writing to it (another exit handler kills them).
    process.once('exit', () => {
      for (const d of dataDirs) {
        try {
          rmSync(d, { recursive: true, force: true, maxRetries: 2 });
        } catch {
          // left for the system's cleanup of temporary files
        }
      }
    });
  }
  return dir;
}
function removeBenchDataDir(dir: string): void {
  dataDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
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

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summarize(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    n: s.length,
    p50: round(percentile(s, 50)),
    p90: round(percentile(s, 90)),
    p99: round(percentile(s, 99)),
    max: round(s.at(-1) ?? NaN),
  };
}

/** Runs `task` `total` times with `concurrency` in flight, returning each call's latency in ms. */
export async function runConcurrent(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        await task(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
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

/** The command line of a benchmark: null after printing `help` for `--help`, else a reader of `--name value`. */
export function benchOptions(help: string): ((name: string, fallback: string) => string) | null {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(help);
    return null;
  }
  return (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
}

/** What a process is, by a part of its command line; the first that matches (the floor's worker before Temporal). */
const ROLES: [string, string][] = [
  ['bench/floor/worker', 'floor worker'],
  ['fake-openai', 'model'],
  ['postgres', 'postgres'],
  ['temporal', 'temporal'],
  ['worker/main', 'worker'],
  ['api/server', 'api'],
  ['bench/baseline', 'baseline'],
  ['caddy', 'balancer'],
];

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** A process's parent and its CPU so far (user + system) from /proc; undefined once it is gone. */
function processStat(pid: number | string): { ppid: number; cpuMs: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the name: state, ppid, …, utime (12th), stime (13th), cutime, cstime.
    return { ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** Milliseconds of CPU a process has used so far; undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  return processStat(pid)?.cpuMs;
}

/**
 * What a thread of a Node process does, by its name (Linux's `comm`): its main thread (the event loop), the Temporal
 * SDK core's threads (tokio's, and the one that runs workflows' state machines), or Node's unnamed ones — V8's
 * platform threads (GC, compilers) and worker threads such as the SDK's workflow thread, which Node 20 cannot name.
 * An unnamed thread carries the name of the thread that made it: the main thread's, which is the executable's name
 * (`node`, but not on every machine: `nodejs` on some) or a `process.title` set before the thread was made.
 */
export function threadKind(name: string, isMain: boolean, mainName = 'node'): string {
  if (isMain) return 'main';
  if (name.startsWith('tokio-runtime')) return 'sdk core';
  if (name.startsWith('workflow-proces')) return 'sdk core workflows';
  if (name === 'node' || name === mainName) return 'V8 and workflow threads';
  return 'other threads';
}

/** CPU milliseconds so far of each kind of thread (threadKind) of a process; empty once it is gone. */
export function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  let mainName: string | undefined;
  try {
    mainName = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const kind = threadKind(name, tid === String(pid), mainName);
      out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** This process and every process under it, each with its role (ROLES) and its CPU so far. Linux only. */
function platformProcesses(): { pid: number; role: string; cpuMs: number }[] {
  const procs: { pid: number; ppid: number; cpuMs: number; cmd: string }[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  for (const pid of pids) {
    const stat = processStat(pid);
    if (!stat) continue; // gone meanwhile
    try {
      procs.push({ pid: Number(pid), ...stat, cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  const children = new Map<number, typeof procs>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: { pid: number; role: string; cpuMs: number }[] = [];
  const walk = (pid: number, inherited?: string) => {
    for (const p of children.get(pid) ?? []) {
      const role = inherited ?? ROLES.find(([part]) => p.cmd.includes(part))?.[1];
      out.push({ pid: p.pid, role: role ?? 'other', cpuMs: p.cpuMs });
      walk(p.pid, role);
    }
  };
  const self = procs.find((p) => p.pid === process.pid);
  if (self) out.push({ pid: self.pid, role: 'load generator + fake LLM', cpuMs: self.cpuMs });
  walk(process.pid);
  return out;
}

/**
 * CPU time used so far by this process and every process under it (the platform's Postgres, Temporal dev server,
 * worker and API), grouped by what they are, in milliseconds. Linux only (reads /proc); elsewhere, empty.
 */
export function cpuByRole(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of platformProcesses()) out[p.role] = (out[p.role] ?? 0) + p.cpuMs;
  return out;
}

/** The platform's Node processes (the worker, the API, the floor's worker): what is read by thread and by event loop. */
function nodeProcesses() {
  return platformProcesses().filter((p) => ['worker', 'api', 'floor worker'].includes(p.role));
}

/**
 * The CPU of the platform's Node processes (the worker, the API, the floor's worker) by kind of thread (threadKind),
 * as `worker: main`, `worker: sdk core`…, in milliseconds so far: what a process's CPU went to, the event loop or
 * the threads beside it.
 */
export function cpuByThread(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of nodeProcesses()) {
    for (const [kind, ms] of Object.entries(threadCpuMs(p.pid)))
      out[`${p.role}: ${kind}`] = (out[`${p.role}: ${kind}`] ?? 0) + ms;
  }
  return out;
}

/** How many times a process's main thread has gone to sleep so far (its voluntary context switches); 0 once it is gone. */
export function mainThreadSleeps(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0; // gone meanwhile
  }
}

/**
 * How many times the event loops of the worker and of the API have gone to sleep so far (mainThreadSleeps, summed
 * over the processes of a role): each is a wake-up to come, with the poll, the switch and the loop's phases it costs
 * whatever it then handles. Linux only; elsewhere, empty.
 */
export function eventLoopSleeps(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of nodeProcesses()) out[p.role] = (out[p.role] ?? 0) + mainThreadSleeps(p.pid);
  return out;
}

/** Per operation, by key, between two readings: CPU milliseconds (`cpuByRole()`, `cpuByThread()`) or counts. */
export function cpuPerOperation(
  before: Record<string, number>,
  after: Record<string, number>,
  operations: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.keys(after)
      .filter((k) => after[k] - (before[k] ?? 0) > 0)
      .map((k) => [k, Math.round(((after[k] - (before[k] ?? 0)) / operations) * 1000) / 1000]),
  );
}

/**
 * How long a visitor reads an answer before the next message: `readMs` on average, spread evenly over ±`jitter` of
 * it. Without the spread, visitors who all began in the same second stay in step for the whole run (every answer and
 * every reading takes the same time), so each of their turns lands in a burst of all of them; people read at their
 * own pace, and drift apart after a burst.
 */
export function readingTime(readMs: number, jitter: number): number {
  return readMs * (1 + jitter * (2 * Math.random() - 1));
}

/**
 * The load and floor benchmarks' audience: `count` visitors, each taking a turn, reading (readingTime), and taking
 * the next, until stopped. Every visitor's first turn goes at once: the burst of new conversations. A failed turn is
 * recorded in `errors` and the visitor goes on.
 */
export function visitorsTakingTurns(
  count: number,
  turn: (visitor: number, first: boolean) => Promise<void>,
  reading: { readMs: number; jitter: number },
): { errors: string[]; stop(): Promise<void> } {
  let stopAt = Infinity;
  const errors: string[] = [];
  const loops = Array.from({ length: count }, async (_, visitor) => {
    for (let first = true; performance.now() < stopAt; first = false) {
      try {
        await turn(visitor, first);
      } catch (err) {
        errors.push((err as Error).message);
      }
      await new Promise((r) => setTimeout(r, readingTime(reading.readMs, reading.jitter)));
    }
  });
  return {
    errors,
    async stop() {
      stopAt = 0;
      await Promise.all(loops);
    },
  };
}
