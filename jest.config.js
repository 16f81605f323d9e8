/**
 * Two projects:
 * - unit: pure code and in-process servers on loopback; no global stack.
 * - stack: HTTP, workflow and browser tests against one real stack (embedded Postgres, Temporal dev server, worker,
 *   API, fake OpenAI) started once per run in test/global-setup.ts.
 */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };

module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'stack',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/{http,workflow,browser}/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
  ],
};
