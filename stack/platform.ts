import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { migrate } from '../lib/migrate';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './postgres';
import { type ManagedProcess, startProcess, stopList, waitFor } from './processes';
import { type TemporalDevServer, startTemporalDev } from './temporal-dev';

/**
 * The whole platform on one machine, used by `npm start` and by the test harness: embedded Postgres (unless
 * DATABASE_URL), the Temporal dev server (unless TEMPORAL_ADDRESS), migrations, a worker and the API as children.
 */
const ROOT = path.join(__dirname, '..');
/** Node's options for the API and worker; STACK_NODE_ARGS adds some (`--cpu-prof --cpu-prof-dir=/tmp/prof` to profile). */
const NODE_ARGS = ['--import', 'tsx', ...(process.env.STACK_NODE_ARGS ?? '').split(' ').filter(Boolean)];

export interface PlatformOptions {
  dataDir: string;
  env: Record<string, string | undefined>;
  apiPort: number;
  postgresPort: number;
  temporalPort: number;
  temporalUiPort?: number;
  /** Keep Temporal's history in a SQLite file under dataDir (npm start) or in memory (tests). */
  persistTemporal: boolean;
  quiet?: boolean;
  /** With `quiet`, each child's output goes to `<logDir>/<name>.log` instead of the terminal. */
  logDir?: string;
  log?: (msg: string) => void;
}

export interface Platform {
  env: Record<string, string>;
  apiUrl: string;
  /** The Temporal UI run links point at: the dev server's, or TEMPORAL_UI_URL; none with an external Temporal. */
  temporalUiUrl?: string;
  postgres?: EmbeddedPostgres;
  temporal?: TemporalDevServer;
  api: ManagedProcess;
  worker: ManagedProcess;
  startWorker(): Promise<ManagedProcess>;
  stop(): Promise<void>;
}

/** A key for sealing signing secrets, generated once per data folder when none is configured. */
function secretKeyFor(dataDir: string): string {
  const file = path.join(dataDir, 'secret-encryption.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * The environment of a stack's API and worker processes: this process's with `env` over it (a name that `env` sets
 * to undefined is left out, even when this process has it), and the data folder's sealing key unless one is set.
 */
export function childEnv(dataDir: string, env: Record<string, string | undefined> = {}): Record<string, string> {
  const merged: Record<string, string> = Object.fromEntries(
    Object.entries({ ...process.env, ...env }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  merged.SECRET_ENCRYPTION_KEY ||= secretKeyFor(dataDir);
  return merged;
}

export interface ChildOptions {
  quiet?: boolean;
  logDir?: string;
  /** The process's name in the output and its log file (`api`, `worker` by default; `api-2` in a cluster). */
  name?: string;
}

function logTo(name: string, opts: ChildOptions): ((line: string) => void) | undefined {
  if (!opts.logDir) return undefined;
  mkdirSync(opts.logDir, { recursive: true });
  const file = path.join(opts.logDir, `${name}.log`);
  return (line) => appendFileSync(file, `${line}\n`);
}

export function startApi(env: Record<string, string>, opts: ChildOptions = {}): ManagedProcess {
  const name = opts.name ?? 'api';
  return startProcess(name, process.execPath, [...NODE_ARGS, path.join(ROOT, 'api', 'server.ts')], {
    env,
    cwd: ROOT,
    quiet: opts.quiet,
    onLine: logTo(name, opts),
  });
}

export async function startWorker(env: Record<string, string>, opts: ChildOptions = {}): Promise<ManagedProcess> {
  let ready = false;
  const name = opts.name ?? 'worker';
  const log = logTo(name, opts);
  const proc = startProcess(name, process.execPath, [...NODE_ARGS, path.join(ROOT, 'worker', 'main.ts')], {
    env,
    cwd: ROOT,
    quiet: opts.quiet,
    onLine: (line) => {
      log?.(line);
      if (line.includes('worker started')) ready = true;
    },
  });
  await waitFor('worker', async () => ready, 120_000, proc.child);
  return proc;
}

export async function waitForApi(url: string, proc: ManagedProcess): Promise<void> {
  await waitFor('api', async () => (await fetch(`${url}/healthz`)).ok, 60_000, proc.child);
}

export async function startPlatform(opts: PlatformOptions): Promise<Platform> {
  const log = opts.log ?? (() => undefined);
  mkdirSync(opts.dataDir, { recursive: true });
  const env = childEnv(opts.dataDir, opts.env);
  env.PORT = String(opts.apiPort);

  const { add: onStop, stopAll } = stopList();
  try {
    let postgres: EmbeddedPostgres | undefined;
    if (!env.DATABASE_URL) {
      log(
        `starting embedded Postgres on 127.0.0.1:${opts.postgresPort} (data in ${path.join(opts.dataDir, 'postgres')})`,
      );
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(opts.dataDir, 'postgres'),
        port: opts.postgresPort,
        database: 'agent_platform',
        quiet: true,
      });
      onStop(() => postgres!.stop());
      env.DATABASE_URL = postgres.url;
    }

    let temporal: TemporalDevServer | undefined;
    if (!env.TEMPORAL_ADDRESS) {
      log(`starting the Temporal dev server on 127.0.0.1:${opts.temporalPort}`);
      temporal = await startTemporalDev({
        port: opts.temporalPort,
        uiPort: opts.temporalUiPort,
        headless: !opts.temporalUiPort,
        dbFile: opts.persistTemporal ? path.join(opts.dataDir, 'temporal.db') : undefined,
        quiet: opts.quiet,
      });
      onStop(() => temporal!.stop());
      env.TEMPORAL_ADDRESS = temporal.address;
      if (opts.temporalUiPort) env.TEMPORAL_UI_URL ||= temporal.uiUrl;
    }

    log('applying migrations');
    const applied = await migrate(env.DATABASE_URL, () => undefined);
    if (applied.length) log(`applied ${applied.length} migration(s): ${applied.join(', ')}`);

    log('starting the worker');
    const worker = await startWorker(env, { quiet: opts.quiet, logDir: opts.logDir });
    const workers = [worker];
    onStop(async () => {
      for (const w of workers) await w.stop();
    });

    log('starting the API');
    const api = startApi(env, { quiet: opts.quiet, logDir: opts.logDir });
    onStop(() => api.stop());
    const apiUrl = `http://127.0.0.1:${opts.apiPort}`;
    await waitForApi(apiUrl, api);

    return {
      env,
      apiUrl,
      temporalUiUrl: env.TEMPORAL_UI_URL,
      postgres,
      temporal,
      api,
      worker,
      startWorker: async () => {
        const w = await startWorker(env, { quiet: opts.quiet, logDir: opts.logDir });
        workers.push(w);
        return w;
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
