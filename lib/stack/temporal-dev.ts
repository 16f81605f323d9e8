import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { type ManagedProcess, startProcess, waitFor } from './processes';

const ROOT = path.join(__dirname, '..', '..');
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

export function searchAttributes(): Record<string, string> {
  return JSON.parse(readFileSync(path.join(CONFIG_DIR, 'search-attributes.json'), 'utf8')) as Record<string, string>;
}

export interface TemporalDevServer {
  address: string;
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
  };
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--namespace', cfg.namespace];
  args.push('--log-level', cfg.logLevel);
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  if (opts.headless) args.push('--headless');
  else if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  for (const [name, type] of Object.entries(searchAttributes())) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(cfg.dynamicConfig)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const proc: ManagedProcess = startProcess('temporal', findTemporalCli(), args, { quiet: opts.quiet });
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
  return { address, uiUrl: `http://localhost:${opts.uiPort ?? 8233}`, stop: () => proc.stop('SIGTERM', 10_000) };
}
