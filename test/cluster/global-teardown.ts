import { rmSync } from 'node:fs';
import type { Cluster } from '../../stack/cluster';
import type { FakeOpenAI } from '../support/fake-openai';

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as Record<string, unknown>).__agentPlatformCluster as
    { cluster: Cluster; fake: FakeOpenAI; dataDir: string } | undefined;
  if (!started) return;
  await started.cluster.stop();
  await started.fake.close();
  // KEEP_TEST_DATA=1 keeps the data folder and every process's log for a post-mortem.
  if (!process.env.KEEP_TEST_DATA) rmSync(started.dataDir, { recursive: true, force: true });
}
