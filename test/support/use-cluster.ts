import { SHAPE_ENV, STACK_ENV } from './stack-info';

/**
 * The `cluster` project's test files run against the production shape: `stackInfo()` answers what its global setup
 * started (each test file has its own copy of the environment, so the `stack` project's files are not affected).
 */
const cluster = process.env.AGENT_PLATFORM_TEST_CLUSTER;
if (!cluster)
  throw new Error('The production shape is not running: run the tests with `npm test` (jest project "cluster")');
process.env[STACK_ENV] = cluster;
process.env[SHAPE_ENV] = 'production';
