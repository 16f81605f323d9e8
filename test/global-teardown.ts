import { rmSync } from 'node:fs';
import type { Platform } from '../stack/platform';
import type { FakeOpenAI } from './support/fake-openai';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as Record<string, unknown>).__agentPlatformStack as
    { platform: Platform; fake: FakeOpenAI; dataDir: string } | undefined;
  if (!stack) return;
  await stack.platform.stop();
  await stack.fake.close();
  // KEEP_TEST_DATA=1 keeps the data folder and the children's logs for a post-mortem.
  if (!process.env.KEEP_TEST_DATA) rmSync(stack.dataDir, { recursive: true, force: true });
}
