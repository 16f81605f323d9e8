// ESLint (flat config) with typescript-eslint. Formatting is Prettier's (`npm run format`); this file holds the
// rules that keep the layers apart (docs/architecture.md, Layers) and the ones that catch real bugs.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Services that start workflows: activities must not import them (they would import workflow code). */
const WORKFLOW_STARTING_SERVICES = [
  '**/lib/services',
  '**/lib/checks/service',
  '**/lib/checks/runs',
  '**/lib/conversations/service',
  '**/lib/conversations/sessions',
  '**/lib/conversations/turn',
  '**/lib/conversations/chat',
  '**/lib/conversations/stream',
  '**/lib/conversations/visitor',
  '**/lib/conversations/operator',
  '**/lib/conversations/erase',
  '**/lib/scans/service',
  '**/lib/scans/start',
  '**/lib/scans/stop',
  '**/lib/scans/schedules',
  '**/lib/scans/views',
  '**/lib/scans/workflow',
  '**/lib/triggers/service',
];

/**
 * stack/ starts Postgres, Temporal and the production shape for `npm start`, the tests and the benchmarks: tooling
 * around the platform, never part of what runs in production.
 */
const STACK_IS_DEV_TOOLING = {
  group: ['**/stack/*'],
  message: 'stack/ is dev tooling (npm start, tests, bench): runtime code never imports it.',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.data/',
      '.tools/',
      'dist/',
      'coverage/',
      'bench/results/',
      'web/dashboard/dist*/',
      'web/widget/dist*/',
      'test-artifacts/',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    // The dashboard's pages (web/dashboard/src/*.tsx) are typed by web/dashboard/tsconfig.json, found per file.
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: {
          // Files that exist only on stdin: test/unit/lint-rules.test.ts lints fence-breaking probes under these names.
          allowDefaultProject: [
            'workflows/zz-lint-probe.ts',
            'workflows/contracts/zz-lint-probe.ts',
            'activities/zz-lint-probe.ts',
            'api/routes/zz-lint-probe.ts',
            'lib/zz-lint-probe.ts',
            'worker/zz-lint-probe.ts',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its error (STYLE.md, from the Temporal SDK's own config).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Casts and `any` are sometimes the honest type at a boundary (pg rows, JSON); reviewed, not banned.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
      // Control characters in patterns are deliberate here: NUL and friends are what Postgres and ids must not hold.
      'no-control-regex': 'off',
    },
  },
  {
    // The workflow sandbox fence (STYLE.md 4): workflow code is deterministic and bundled apart. It imports only the
    // workflow SDK, its sibling workflow files (contracts, failures, other workflows) and activity *types*.
    files: ['workflows/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./|\\.\\./activities/)',
              message: 'Workflow files import only @temporalio/workflow, ./sibling workflow files and activity types.',
            },
            {
              regex: '^\\.\\./activities/',
              allowTypeImports: true,
              message: 'Workflows import activity *types* only (import type), never activity code.',
            },
          ],
        },
      ],
    },
  },
  {
    // A workflow's contract is imported by the services, the workflow and its activities alike: it holds no workflow
    // code, only the SDK's definitions, other contracts and the failure types.
    files: ['workflows/contracts/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./[a-z-]+$|\\.\\./failures$)',
              message: 'A contract imports only @temporalio/workflow, other contracts and ../failures.',
            },
          ],
        },
      ],
    },
  },
  {
    // Activities reach the world through injected deps and domain code; never through workflow values or the
    // services that start workflows (those are injected as ports, e.g. TriggerRuntime).
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./workflows/(?!contracts/[a-z-]+$|failures$)',
              message: 'Activities import only workflows/contracts/* and workflows/failures, never workflow code.',
            },
            {
              group: WORKFLOW_STARTING_SERVICES,
              message: 'Inject what an activity needs of a workflow-starting service (a port type).',
            },
            { group: ['**/api/*', '**/api/**'], message: 'Activities never import the HTTP layer.' },
            STACK_IS_DEV_TOOLING,
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Activities get configuration injected.',
        },
        { selector: "NewExpression[callee.name='OpenAI']", message: 'Only worker/ builds clients.' },
        { selector: "NewExpression[callee.property.name='Pool']", message: 'Only worker/ builds clients.' },
      ],
    },
  },
  {
    // Domain code and services never reach up into the HTTP layer or the worker's wiring.
    files: ['lib/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api/*', '**/api/**', '**/worker/*', '**/activities/*'],
              message: 'lib/ is below api/, worker/ and activities/.',
            },
            STACK_IS_DEV_TOOLING,
          ],
        },
      ],
    },
  },
  {
    // The API's wiring, the worker and agentctl run in production: none of them starts the development stack.
    files: [
      'api/*.ts',
      'api/middleware/**/*.ts',
      'api/mcp/**/*.ts',
      'api/docs/**/*.ts',
      'worker/**/*.ts',
      'cli/**/*.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [STACK_IS_DEV_TOOLING] }],
    },
  },
  {
    // Routes only speak HTTP: they validate, call one service function and shape the answer. No route imports another,
    // and none touches the database or Temporal itself.
    files: ['api/routes/**/*.ts'],
    ignores: ['api/routes/api.ts', 'api/routes/service.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\./', message: 'A route never imports another route; shared pieces live in api/ or lib/.' },
            {
              group: ['**/lib/db', '**/lib/temporal', '@temporalio/*', 'pg'],
              message: 'Routes call services; services own SQL and Temporal.',
            },
            STACK_IS_DEV_TOOLING,
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='deps'][property.name=/^(db|temporal)$/]",
          message: 'Routes call deps.services, not the database or Temporal.',
        },
      ],
    },
  },
  {
    // Sizes a reader takes in at once: a module of a few hundred lines, a function on a screen or two. Tests are
    // exempt: a describe block is a list of cases, not a unit to read at once.
    files: ['**/*.ts', '**/*.tsx'],
    ignores: ['test/**'],
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 150, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
