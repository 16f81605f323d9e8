import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeRuntimeEnv } from '../lib/runtime-env';
import { startPlatform } from '../stack/platform';

/** Also what `npm start -- --help` prints before any setup (scripts/launch.sh). */
const HELP = readFileSync(path.join(__dirname, 'help', 'start.txt'), 'utf8').trimEnd();

const Ports = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(5433),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  DATA_DIR: z.string().default(path.join(__dirname, '..', '.data')),
});

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const parsed = Ports.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v)));
  if (!parsed.success) {
    console.error(
      `Invalid configuration:\n${parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n')}`,
    );
    process.exit(78);
  }
  const o = parsed.data;
  const say = (m: string) => console.log(`[start] ${m}`);
  const platform = await startPlatform({
    dataDir: o.DATA_DIR,
    env: { NODE_ENV: process.env.NODE_ENV ?? 'development' },
    apiPort: o.PORT,
    postgresPort: o.EMBEDDED_PG_PORT,
    temporalPort: o.TEMPORAL_PORT,
    temporalUiPort: o.TEMPORAL_UI_PORT,
    persistTemporal: true,
    log: say,
  });
  writeRuntimeEnv(
    {
      DATABASE_URL: platform.env.DATABASE_URL,
      TEMPORAL_ADDRESS: platform.env.TEMPORAL_ADDRESS,
      SECRET_ENCRYPTION_KEY: platform.env.SECRET_ENCRYPTION_KEY,
    },
    path.join(o.DATA_DIR, 'runtime.env'),
  );

  const base = `http://localhost:${o.PORT}`;
  console.log(`
  Agent Platform is running.

    Dashboard      ${base}/signup   (sign up, then create an agent: its keys are shown once)
    Widget         <script src="${base}/widget.js" data-key="pk_…" async></script>
    API            ${base}
    API reference  ${base}/docs   (machine-readable: ${base}/v1/openapi.json)
    Health         ${base}/healthz   ${base}/readyz   ${base}/metrics
    Temporal UI    ${platform.temporalUiUrl ?? 'none: set TEMPORAL_UI_URL to your Temporal UI for the run log’s links'}
    Postgres       ${platform.postgres ? `embedded on 127.0.0.1:${o.EMBEDDED_PG_PORT}, data in ${platform.postgres.dataDir}` : 'DATABASE_URL'}

  Or get keys:  npx agentctl bootstrap      (a workspace, an owner, a bot, and every key shown once)
  Try it:       curl -s ${base}/v1/api/messages?session_id=demo -H "X-Bot-Key: <sk_ key>"

  Ctrl-C stops everything; data stays in ${o.DATA_DIR}.
`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the API, the worker, Temporal and Postgres`);
    await platform.stop();
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // A child that dies on its own takes the platform down with a clear message rather than leaving half of it.
  for (const proc of [platform.api, platform.worker]) {
    proc.child.once('exit', (code) => {
      if (!stopping) {
        say(`${proc.name} exited unexpectedly (code ${code}); stopping`);
        void shutdown('exit').then(() => process.exit(1));
      }
    });
  }
}

main().catch((err) => {
  console.error(`[start] failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
