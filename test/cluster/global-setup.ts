import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster } from '../../stack/cluster';
import { freePort } from '../../stack/processes';
import { startFakeOpenAI } from '../support/fake-openai';
import { type StackInfo, testStackEnv } from '../support/stack-info';

/** Where the cluster's StackInfo reaches the `cluster` project's test files (test/support/use-cluster.ts). */
export const CLUSTER_ENV = 'AGENT_PLATFORM_TEST_CLUSTER';

/**
 * The `cluster` project runs tests against the production shape (stack/cluster.ts): a real Temporal server, two
 * API replicas behind the balancer, two workers — with the same settings as the single-machine test stack.
 */
export default async function globalSetup(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-platform-cluster-'));
  chmodSync(dataDir, 0o755);
  const fake = await startFakeOpenAI();
  const taskQueue = `agent-platform-cluster-${randomBytes(4).toString('hex')}`;
  const started = Date.now();
  const cluster = await startCluster({
    dataDir,
    apis: 2,
    workers: 2,
    port: await freePort(),
    env: testStackEnv({ fakeOpenAIUrl: fake.url, taskQueue }),
    quiet: true,
    logDir: path.join(dataDir, 'logs'),
  }).catch((err) => {
    throw new Error(`${err instanceof Error ? err.message : err}\n(logs in ${path.join(dataDir, 'logs')})`);
  });
  const info: StackInfo & { replicas: string[] } = {
    apiUrl: cluster.url,
    databaseUrl: cluster.env.DATABASE_URL,
    temporalAddress: cluster.env.TEMPORAL_ADDRESS,
    taskQueue,
    namespace: 'default',
    fakeOpenAIUrl: fake.url,
    secretEncryptionKey: cluster.env.SECRET_ENCRYPTION_KEY,
    dataDir,
    env: cluster.env,
    replicas: cluster.apis.map((a) => a.url),
  };
  process.env[CLUSTER_ENV] = JSON.stringify(info);
  (globalThis as Record<string, unknown>).__agentPlatformCluster = { cluster, fake, dataDir };
  process.stdout.write(`\nProduction shape up in ${Date.now() - started} ms (logs: ${path.join(dataDir, 'logs')})\n`);
}
