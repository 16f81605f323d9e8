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
