import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { NamespaceMissingError, createTemporal, pingTemporal } from '../lib/temporal';
import { buildActivityDeps, workerCapacity, workerConnectionOptions, workerMetrics } from './deps';
import { ensurePlatformSchedules } from './schedules';
import { SearchAttributesMissingError, ensureSearchAttributes } from './search-attributes';

const HELP = `Usage: node --import tsx worker/main.ts

Runs a Temporal worker for the platform's task queue: workflows from workflows/, activities from activities/.
Start as many as you like on as many machines as you like; they share the work. Configuration comes from the
environment (see README.md, Configuration): DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_TASK_QUEUE, OPENAI_* and the rest.`;

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'worker');
  Runtime.install({
    logger: {
      log: (level, message, meta) =>
        logger[level === 'TRACE' ? 'trace' : (level.toLowerCase() as 'info')]({ ...meta }, message),
      trace: (m, meta) => logger.trace(meta ?? {}, m),
      debug: (m, meta) => logger.debug(meta ?? {}, m),
      info: (m, meta) => logger.info(meta ?? {}, m),
      warn: (m, meta) => logger.warn(meta ?? {}, m),
      error: (m, meta) => logger.error(meta ?? {}, m),
    },
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...workerMetrics(config),
    },
  });

  const db = createDb(config.DATABASE_URL, {
    max: config.DATABASE_POOL_SIZE,
    applicationName: 'agent-platform-worker',
  });
  const temporal = await createTemporal(config);
  try {
    await pingTemporal(temporal, 10_000);
  } catch (err) {
    if (!(err instanceof NamespaceMissingError)) throw err;
    // One line an operator can act on, not a stack trace from the first workflow call.
    console.error(`worker: ${err.message}`);
    process.exit(78); // EX_CONFIG, as for other configuration errors
  }
  try {
    await ensureSearchAttributes(temporal);
  } catch (err) {
    if (!(err instanceof SearchAttributesMissingError)) throw err;
    console.error(`worker: ${err.message}`);
    process.exit(78);
  }
  await ensurePlatformSchedules(temporal);

  // The same address, TLS (with the mTLS pair) and API key as every other client of this platform.
  const connection = await NativeConnection.connect(workerConnectionOptions(config));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities(buildActivityDeps(config, db, temporal)),
    // Shutdown waits this long for running activities before cancelling them; a stream in flight finishes.
    shutdownGraceTime: '10 seconds',
    ...workerCapacity(config),
  });

  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Lifecycle lines are logged whatever LOG_LEVEL says: `npm start` and the tests wait for this one.
  createLogger('info', 'worker').info(
    { taskQueue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS },
    'worker started',
  );
  await worker.run();
  await Promise.all([db.end(), connection.close(), temporal.connection.close()]);
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
