import { createServer } from 'node:http';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { createMetrics } from '../lib/metrics';
import { createSecretBox } from '../lib/secret-box';
import { createDeltaHub } from '../lib/streams';
import { createTemporal } from '../lib/temporal';
import { createApp } from './app';

const HELP = `Usage: node --import tsx api/server.ts

Serves the HTTP API on HOST:PORT (default 0.0.0.0:8080). Stateless: run as many replicas as you like behind a load
balancer. Configuration comes from the environment (see README.md, Configuration).`;

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'api');
  const db = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: 'agent-platform-api' });
  const temporal = await createTemporal(config, { lazy: true });
  const deltaHub = createDeltaHub(config.DATABASE_URL, logger);
  const app = createApp({
    config,
    db,
    temporal,
    logger,
    metrics: createMetrics(),
    secrets: createSecretBox(config.SECRET_ENCRYPTION_KEY),
    deltaHub,
  });

  const server = createServer(app.callback());
  // Slightly above typical load-balancer idle timeouts so the balancer closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.listen(config.PORT, config.HOST, () => {
    logger.info({ port: config.PORT, host: config.HOST }, 'api listening');
  });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    logger.info('api stopping');
    server.close(async () => {
      await Promise.allSettled([db.end(), temporal.connection.close(), deltaHub.close()]);
      process.exit(0);
    });
    server.closeIdleConnections();
    // Streams in flight get a few seconds to finish their end frame.
    setTimeout(() => process.exit(0), 8_000).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
