import { createWriteStream, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { RecordedRequest } from '../test/support/fake-openai';
import { withRuntimeEnv } from '../lib/runtime-env';
import type { Db } from '../lib/db';
import { freePort, startProcess, waitFor } from '../stack/processes';
import { type StopOptions, benchDataDir, keepLogs, removeBenchDataDir } from './data-dir';
import { processStat } from './cpu';
import { liftRateLimits, startBenchStack } from './stack';

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
async function startModelProcess(logTo?: (line: string) => void): Promise<ModelProcess> {
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
