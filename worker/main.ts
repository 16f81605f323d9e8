import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { NamespaceMissingError, createTemporal, pingTemporal, watchTemporalReturn } from '../lib/temporal';
import { buildActivityDeps, workerCapacity, workerConnectionOptions, workerMetrics } from './deps';
import { ensurePlatformSchedules } from './schedules';
import { SearchAttributesMissingError, ensureSearchAttributes } from './search-attributes';
import { WorkerSupervisor } from './supervisor';

const HELP = `Usage: node --import tsx worker/main.ts

Runs a Temporal worker for the platform's task queue: workflows from workflows/, activities from activities/.
Start as many as you like on as many machines as you like; they share the work. Configuration comes from the
environment (see README.md, Configure it): DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_TASK_QUEUE, OPENAI_* and the rest.`;

/** An outage of Temporal at least this long is followed by a fresh worker (see worker/supervisor.ts). */
const FRESH_WORKER_AFTER_OUTAGE_MS = 2_000;

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

  // Lifecycle lines are logged whatever LOG_LEVEL says: `npm start` and the tests wait for "worker started".
  const lifecycle = createLogger('info', 'worker');
  // Workflows are bundled once: every worker this process starts (see below) loads the same code.
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: new DefaultLogger('WARN'),
  });
  const activities = createActivities(buildActivityDeps(config, db, temporal));
  const supervisor = new WorkerSupervisor({
    logger: lifecycle,
    createWorker: async () => {
      // The same address, TLS (with the mTLS pair) and API key as every other client of this platform.
      const connection = await NativeConnection.connect(workerConnectionOptions(config));
      try {
        const worker = await Worker.create({
          connection,
          namespace: config.TEMPORAL_NAMESPACE,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          workflowBundle,
          activities,
          // Shutdown waits this long for running activities before cancelling them; a stream in flight finishes.
          shutdownGraceTime: '10 seconds',
          ...workerCapacity(config),
        });
        return { worker, connection };
      } catch (err) {
        await connection.close().catch(() => undefined);
        throw err;
      }
    },
  });
  // After an outage the SDK's pollers ask Temporal for work again only up to 12 s after its return; a fresh worker
  // asks at once (worker/supervisor.ts).
  const watch = watchTemporalReturn(config, {
    minOutageMs: FRESH_WORKER_AFTER_OUTAGE_MS,
    onReturn: (outageMs) => void supervisor.replace(`Temporal is back after ${Math.round(outageMs / 100) / 10} s`),
  });

  const stop = () => supervisor.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await supervisor.start();
  lifecycle.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS }, 'worker started');
  try {
    await supervisor.finished();
  } finally {
    await watch.stop();
  }
  await Promise.all([db.end(), temporal.connection.close()]);
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
