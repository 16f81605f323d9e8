import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { startCluster } from '../stack/cluster';

/** Also what `npm run cluster -- --help` prints before any setup (scripts/launch.sh). */
const HELP = readFileSync(path.join(__dirname, 'help', 'cluster.txt'), 'utf8').trimEnd();

const Options = z.object({
  apis: z.coerce.number().int().min(1).max(8).default(2),
  workers: z.coerce.number().int().min(1).max(8).default(2),
  port: z.coerce.number().int().min(1).max(65535).default(8080),
  'ui-port': z.coerce.number().int().min(1).max(65535).default(8233),
});

function argsOf(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(apis|workers|port|ui-port)(?:=(.*))?$/.exec(argv[i]);
    if (!m) {
      console.error(`Unknown option ${argv[i]}\n\n${HELP}`);
      process.exit(2);
    }
    out[m[1]] = m[2] ?? argv[++i];
  }
  return out;
}

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const parsed = Options.safeParse(argsOf(process.argv.slice(2)));
  if (!parsed.success) {
    console.error(
      `Invalid options:\n${parsed.error.issues.map((i) => `  - --${i.path.join('.')}: ${i.message}`).join('\n')}`,
    );
    process.exit(2);
  }
  const o = parsed.data;
  const dataDir = path.join(process.env.DATA_DIR ?? path.join(__dirname, '..', '.data'), 'cluster');
  const logDir = path.join(dataDir, 'logs');
  const say = (m: string) => console.log(`[cluster] ${m}`);
  const cluster = await startCluster({
    dataDir,
    apis: o.apis,
    workers: o.workers,
    port: o.port,
    uiPort: o['ui-port'],
    env: { NODE_ENV: process.env.NODE_ENV ?? 'development' },
    quiet: true,
    logDir,
    log: say,
  });
  const base = cluster.url;
  console.log(`
  Agent Platform is running in its production shape.

    Platform (balancer)  ${base}   (dashboard ${base}/signup, API reference ${base}/docs)
    API replicas         ${cluster.apis.map((a) => a.url).join('  ')}   (each: /healthz /readyz /metrics)
    Workers              ${cluster.workers.length}, task queue ${cluster.env.TEMPORAL_TASK_QUEUE ?? 'agent-platform-v1'}
    Temporal             ${cluster.env.TEMPORAL_ADDRESS}${
      cluster.temporal
        ? `   (metrics: ${Object.entries(cluster.temporal.metrics)
            .map(([s, a]) => `${s} ${a}`)
            .join(', ')})`
        : ''
    }
    Temporal UI          ${
      cluster.temporalUi
        ? `${cluster.temporalUi.url}   (runs and their histories; the run log links each run there)`
        : cluster.env.TEMPORAL_UI_URL
          ? `${cluster.env.TEMPORAL_UI_URL} (TEMPORAL_UI_URL; not started here)`
          : 'none: with TEMPORAL_ADDRESS, the run log links to Temporal once TEMPORAL_UI_URL names your UI'
    }
    Postgres             ${cluster.postgres ? `platform on 127.0.0.1:${cluster.postgres.port}` : 'DATABASE_URL'}${cluster.temporal ? `, Temporal's on 127.0.0.1:${cluster.temporal.postgres.port}` : ''}
    Logs                 ${logDir}/<name>.log

  Ctrl-C stops everything; data stays in ${dataDir}.
`);
  let stopping = false;
  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the balancer, the APIs, the workers, Temporal and Postgres`);
    await cluster.stop();
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  for (const proc of [...cluster.apis.map((a) => a.process), ...cluster.workers]) {
    proc.child.once('exit', (code) => {
      if (!stopping) say(`${proc.name} exited (code ${code}); the others go on (its log: ${logDir}/${proc.name}.log)`);
    });
  }
}

main().catch((err) => {
  console.error(`[cluster] failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
