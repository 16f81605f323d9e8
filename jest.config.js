/**
 * Three projects:
 * - unit: pure code and in-process servers on loopback; no global stack.
 * - stack: HTTP, workflow and browser tests against one real stack (embedded Postgres, Temporal dev server, worker,
 *   API, fake OpenAI) started once per run in test/global-setup.ts.
 * - cluster: the production shape (a real Temporal server, two API replicas behind a balancer, two workers) started
 *   in test/cluster/global-setup.ts; its files run a subset of the HTTP tests against it, and its own.
 */
const swc = ['@swc/jest', { jsc: { target: 'es2022' } }];
// Our TypeScript, and the few ESM-only packages the code requires (Node 20.19 loads them with require(esm); jest's module
// system does not, so they are compiled to CommonJS like our own files).
// linkedom (the page extractor's DOM) brings its own ESM-only copies of css-select and its kin, nested under
// node_modules/linkedom/node_modules: the patterns match a package at any depth.
const ESM_ONLY_PACKAGES = [
  'eventsource-parser',
  'cssomnom',
  'css-select',
  'css-what',
  'nth-check',
  'boolbase',
  'domhandler',
  'domutils',
  'domelementtype',
  'dom-serializer',
  'entities',
];
const ESM = `(?:${ESM_ONLY_PACKAGES.join('|')})`;
const transform = { '^.+\\.ts$': swc, [`/node_modules/${ESM}/.+\\.js$`]: swc };
const transformIgnorePatterns = [`^(?!.*/node_modules/${ESM}/).*/node_modules/`];

module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'stack',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/{http,workflow,browser}/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
    {
      displayName: 'cluster',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/use-cluster.ts'],
      globalSetup: '<rootDir>/test/cluster/global-setup.ts',
      globalTeardown: '<rootDir>/test/cluster/global-teardown.ts',
    },
  ],
};
