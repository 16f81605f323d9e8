import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributes } from '../lib/temporal';
import { type ManagedProcess, startProcess, waitFor } from './processes';

const ROOT = path.join(__dirname, '..');
const CONFIG_DIR = path.join(ROOT, 'temporal-config');

/** The `temporal` CLI: on PATH, or built by scripts/setup.sh into the project's `.tools/bin`. */
export function findTemporalCli(): string {
  const local = path.join(ROOT, '.tools', 'bin', 'temporal');
  if (existsSync(local)) return local;
  try {
    return execFileSync('sh', ['-c', 'command -v temporal']).toString().trim();
  } catch {
    throw new Error(
      'No `temporal` CLI found: run `bash scripts/setup.sh` (builds it with go install), or set TEMPORAL_ADDRESS',
    );
  }
}

/**
 * How many threads the dev server's Go runtime runs Go code on at once (its GOMAXPROCS): TEMPORAL_DEV_SERVER_CPUS,
 * or half the machine's cores, at least one. The dev server shares the machine with Postgres, the worker and the API;
 * with one thread per core, Go's idle threads spin looking for work, on CPU the others lack: at 300 visitors on two
 * cores, in a slow hour, one thread took 2–4 ms off every turn across all processes, and in faster hours changed
 * nothing measurable (docs/decisions/128-dev-server-go-threads.md).
 */
export function devServerCpus(env: NodeJS.ProcessEnv = process.env, cores = os.availableParallelism()): number {
  const set = env.TEMPORAL_DEV_SERVER_CPUS;
  if (set !== undefined && set !== '') {
    const n = Number(set);
    if (!Number.isInteger(n) || n < 1) {
      throw new Error(`TEMPORAL_DEV_SERVER_CPUS must be a whole number of at least 1, not ${JSON.stringify(set)}`);
    }
    return n;
  }
  return Math.max(1, Math.floor(cores / 2));
}

/**
 * How the dev server keeps its history in a file (`npm start`). The CLI sets no pragma, so SQLite's defaults applied:
 * a rollback journal and a full sync, several fsyncs per transaction on the server's one connection, which every
 * workflow write then queued behind with the CPU idle — a burst's Update-with-Start timed out at the history shard's
 * 5 s IO deadline. A write-ahead log synced at checkpoints instead: a crash of the process loses nothing; a power loss
 * may lose the last transactions, never the file (docs/decisions/159-dev-server-history-file.md).
 */
const HISTORY_FILE_PRAGMAS = ['journal_mode=WAL', 'synchronous=NORMAL'];

export interface TemporalDevServer {
  address: string;
  /** The server's process id (what `temporal server start-dev` runs as). */
  pid: number;
  uiUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` with the project's search attributes and dynamic config
 * (temporal-config/). With `dbFile` the history survives restarts; without it, it lives in memory (tests).
 */
export async function startTemporalDev(opts: {
  port: number;
  uiPort?: number;
  dbFile?: string;
  headless?: boolean;
  quiet?: boolean;
}): Promise<TemporalDevServer> {
  const cfg = JSON.parse(readFileSync(path.join(CONFIG_DIR, 'dev-server.json'), 'utf8')) as {
    namespace: string;
    logLevel: string;
    dynamicConfig: Record<string, unknown>;
    singleProcessDynamicConfig: Record<string, unknown>;
  };
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--namespace', cfg.namespace];
  args.push('--log-level', cfg.logLevel);
  if (opts.dbFile)
    args.push('--db-filename', opts.dbFile, ...HISTORY_FILE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]));
  if (opts.headless) args.push('--headless');
  else if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  for (const [name, type] of Object.entries(searchAttributes())) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries({ ...cfg.dynamicConfig, ...cfg.singleProcessDynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const proc: ManagedProcess = startProcess('temporal', findTemporalCli(), args, {
    quiet: opts.quiet,
    env: { ...process.env, GOMAXPROCS: String(devServerCpus()) },
  });
  const address = `127.0.0.1:${opts.port}`;
  await waitFor(
    'temporal dev server',
    async () => {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.workflowService.getSystemInfo({});
        return true;
      } finally {
        await conn.close();
      }
    },
    90_000,
    proc.child,
  );
  return {
    address,
    pid: proc.child.pid ?? 0,
    uiUrl: `http://localhost:${opts.uiPort ?? 8233}`,
    stop: () => proc.stop('SIGTERM', 10_000),
  };
}
