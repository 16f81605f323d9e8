import { randomBytes } from 'node:crypto';

/** What the global setup started, handed to every test file through one environment variable. */
export interface StackInfo {
  apiUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  namespace: string;
  fakeOpenAIUrl: string;
  secretEncryptionKey: string;
  dataDir: string;
  /** The environment the API and worker were started with, for tests that start more of them. */
  env: Record<string, string>;
}

export const STACK_ENV = 'AGENT_PLATFORM_TEST_STACK';

/**
 * The settings the test stacks' APIs and workers run with, the single-machine stack's and the production shape's
 * alike (each global setup adds what its shape needs: addresses, the proxy in front).
 */
export function testStackEnv(opts: { fakeOpenAIUrl: string; taskQueue: string }): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info',
    TEMPORAL_TASK_QUEUE: opts.taskQueue,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: opts.fakeOpenAIUrl,
    LLM_MODEL: 'fake-model',
    // The fake's directive models (`fake-fail-500`, `fake-slow-3000`…) on every plan, beside the built-in catalogue.
    LLM_MODELS: 'fake-*:1',
    // Short, so the turn-timeout path is testable; the fake LLM answers at once otherwise.
    LLM_TURN_TIMEOUT_MS: '4000',
    // Webhook receivers, crawled sites and poll targets in tests are servers on loopback.
    SSRF_ALLOW_LOOPBACK: 'true',
    // Schedule and poll triggers every second, so their runs are seen within a test.
    TRIGGER_MIN_INTERVAL_SECONDS: '1',
    // Webhook retries after 0.1, 0.5 and 2.5 s (1, 5 and 25 s in production), so a delivery given up is seen soon.
    WEBHOOK_RETRY_FIRST_MS: '100',
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // A builder message queued behind a slow turn answers "busy" after 2 s (30 s by default).
    BUILDER_QUEUE_WAIT_MS: '2000',
  };
}

/** Set to `production` for the `cluster` project's files (test/support/use-cluster.ts). */
export const SHAPE_ENV = 'AGENT_PLATFORM_TEST_SHAPE';

/** The file runs against the production shape (the real Temporal server), not the single-machine stack. */
export function onProductionShape(): boolean {
  return process.env[SHAPE_ENV] === 'production';
}

export function stackInfo(): StackInfo {
  const raw = process.env[STACK_ENV];
  if (!raw) throw new Error('The test stack is not running: run the tests with `npm test` (jest project "stack")');
  return JSON.parse(raw) as StackInfo;
}
