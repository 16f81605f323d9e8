import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type ManagedProcess, startProcess, waitFor } from './processes';

/**
 * The balancer in front of the API replicas in the production shape (`npm run cluster`, the cluster tests, `npm run
 * bench -- … --cluster`): Caddy, built from the Go module proxy with `go install` by `scripts/setup.sh`, run with
 * `deploy/Caddyfile` — the file operators copy, so what is tested is what they run. That file says why each setting
 * is there (round robin, a refused connection retried on the next replica, streams flushed at once, X-Forwarded-*
 * replaced, a fixed set of upstreams, active health checks only); this starts it, waits until it answers, stops it.
 */
const CADDY_VERSION = 'v2.11.9'; // scripts/setup.sh builds the same
const ROOT = path.join(__dirname, '..');
const CADDY_DIR = path.join(ROOT, '.tools', 'caddy', CADDY_VERSION);
const CADDYFILE = path.join(ROOT, 'deploy', 'Caddyfile');

export interface Balancer {
  /** Where clients reach the platform. */
  url: string;
  port: number;
  process: ManagedProcess;
  close(): Promise<void>;
}

export interface BalancerOptions {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** `http://127.0.0.1:PORT` of each replica. */
  backends: string[];
  /** Caddy's own folder (its XDG data and config homes): nothing is written to the user's home. */
  dataDir: string;
  /** Caddy's output in `<logDir>/<name>.log`. */
  logDir?: string;
  name?: string;
  quiet?: boolean;
}

export async function startBalancer(opts: BalancerOptions): Promise<Balancer> {
  const bin = path.join(CADDY_DIR, 'caddy');
  if (!existsSync(bin)) {
    throw new Error(`Caddy ${CADDY_VERSION} is not built (${bin} is missing): run \`bash scripts/setup.sh --cluster\``);
  }
  const name = opts.name ?? 'balancer';
  mkdirSync(opts.dataDir, { recursive: true });
  const log = opts.logDir ? path.join(opts.logDir, `${name}.log`) : undefined;
  if (opts.logDir) mkdirSync(opts.logDir, { recursive: true });
  const proc = startProcess(name, bin, ['run', '--config', CADDYFILE, '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: opts.dataDir,
      XDG_DATA_HOME: path.join(opts.dataDir, 'data'),
      XDG_CONFIG_HOME: path.join(opts.dataDir, 'config'),
      AGENT_PLATFORM_SITE: `:${opts.port}`,
      AGENT_PLATFORM_BIND: '127.0.0.1',
      AGENT_PLATFORM_API_UPSTREAMS: opts.backends.map((b) => new URL(b).host).join(' '),
    },
    quiet: opts.quiet,
    onLine: log ? (line) => appendFileSync(log, `${line}\n`) : undefined,
  });
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    // Listening: any answer will do (a 503 while no replica is up yet is Caddy's too).
    await waitFor(
      `the balancer (Caddy ${CADDY_VERSION})`,
      async () => (await fetch(`${url}/healthz`)).status > 0,
      30_000,
      proc.child,
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, port: opts.port, process: proc, close: () => proc.stop() };
}
