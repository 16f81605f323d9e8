import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPlatform } from '../stack/platform';
import { freePort } from '../stack/processes';
import { startFakeOpenAI } from './support/fake-openai';
import { STACK_ENV, type StackInfo, testStackEnv } from './support/stack-info';

/**
 * One real stack per test run (docs/architecture.md, Testing): embedded Postgres on a fresh data folder, the Temporal dev
 * server in memory, a worker and the API as child processes, and the fake OpenAI server in this process. Children's
 * logs go to `<dataDir>/logs/` (printed on failure to start). With DATABASE_URL or TEMPORAL_ADDRESS set, those are
 * used instead, as in production.
 */
export default async function globalSetup(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-platform-test-'));
  chmodSync(dataDir, 0o755); // Postgres runs as the postgres user under root and must reach its folder
  const fake = await startFakeOpenAI();
  const taskQueue = `agent-platform-test-${randomBytes(4).toString('hex')}`;
  // The Temporal UI runs too: the dashboard links each run to its workflow there, and a browser test follows a link.
  const temporalUiPort = await freePort();
  const apiPort = await freePort();
  const env = {
    ...testStackEnv({ fakeOpenAIUrl: fake.url, taskQueue }),
    // Where links (e-mails, trigger addresses, media) point: the API as the tests reach it.
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    // Each test file is its own client (test/support/helpers.ts testClientAddress), told by X-Forwarded-For.
    TRUST_PROXY: 'true',
    TEMPORAL_UI_URL: `http://127.0.0.1:${temporalUiPort}`,
  };
  const started = Date.now();
  const platform = await startPlatform({
    dataDir,
    env,
    apiPort,
    postgresPort: await freePort(),
    temporalPort: await freePort(),
    temporalUiPort,
    persistTemporal: false,
    quiet: true,
    logDir: path.join(dataDir, 'logs'),
  }).catch((err) => {
    throw new Error(`${err instanceof Error ? err.message : err}\n(child logs in ${path.join(dataDir, 'logs')})`);
  });
  const info: StackInfo = {
    apiUrl: platform.apiUrl,
    databaseUrl: platform.env.DATABASE_URL,
    temporalAddress: platform.env.TEMPORAL_ADDRESS,
    taskQueue,
    namespace: 'default',
    fakeOpenAIUrl: fake.url,
    secretEncryptionKey: platform.env.SECRET_ENCRYPTION_KEY,
    dataDir,
    env: platform.env,
  };
  process.env[STACK_ENV] = JSON.stringify(info);
  (globalThis as Record<string, unknown>).__agentPlatformStack = { platform, fake, dataDir };
  process.stdout.write(`\nTest stack up in ${Date.now() - started} ms (logs: ${path.join(dataDir, 'logs')})\n`);
}
