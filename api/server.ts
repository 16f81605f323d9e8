import { createServer } from 'node:http';
import { embeddingModelOf, listenUrlOf, loadConfig, type Config } from '../lib/config';
import { createDb } from '../lib/db';
import { ApiError } from '../lib/errors';
import type { Embedder } from '../lib/knowledge/store';
import { LlmError, createOpenAiLlm } from '../lib/llm';
import { createLogger, type Logger } from '../lib/logger';
import { createMetrics } from '../lib/metrics';
import { createSecretBox } from '../lib/secret-box';
import { createServices } from '../lib/services';
import { createDeltaHub } from '../lib/streams/listener';
import { createTemporal } from '../lib/temporal';
import { createApp } from './app';

const HELP = `Usage: node --import tsx api/server.ts

Serves the HTTP API on HOST:PORT (default 0.0.0.0:8080). Stateless: run as many replicas as you like behind a load
balancer. Configuration comes from the environment (see README.md, Configure it).`;

/** One embedding call of a knowledge write (up to 128 fragments) may take this long; the client's own limit is 10 min. */
const EMBED_CALL_TIMEOUT_MS = 30_000;

/**
 * The knowledge writes' embedder when embeddings are on (OPENAI_API_KEY and EMBEDDING_MODEL), else undefined.
 * A failing embedding call refuses the write as a retryable 503 `service_unavailable` before anything is written
 * (docs/decisions/032-embeddings.md); the log line names the failure kind, never the key.
 */
function buildEmbedder(config: Config, logger: Logger): Embedder | undefined {
  const model = embeddingModelOf(config);
  if (!model) {
    if (config.EMBEDDING_MODEL) logger.warn('EMBEDDING_MODEL is set without OPENAI_API_KEY: embeddings are off');
    return undefined;
  }
  const llm = createOpenAiLlm({
    apiKey: config.OPENAI_API_KEY!,
    baseURL: config.OPENAI_BASE_URL,
    model: config.LLM_MODEL,
    embeddingModel: model,
  });
  const embed = llm.embed!;
  logger.info({ embeddingModel: model }, 'knowledge embeddings on');
  return async (texts) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new LlmError('llm_overloaded', 'The embedding model did not answer in time', 10)),
          EMBED_CALL_TIMEOUT_MS,
        );
      });
      return await Promise.race([embed(texts), timeout]);
    } catch (err) {
      const kind = err instanceof LlmError ? err.kind : 'unclassified';
      const retryAfter = err instanceof LlmError ? (err.retryAfterSeconds ?? 5) : 5;
      logger.warn(
        { embeddingModel: model, kind, reason: err instanceof LlmError ? err.message : String((err as Error)?.name) },
        'embedding failed: knowledge write refused',
      );
      throw new ApiError(
        'service_unavailable',
        'The embedding model could not embed this source; nothing was written, retry shortly',
        {},
        { 'Retry-After': String(retryAfter) },
      );
    } finally {
      clearTimeout(timer);
    }
  };
}

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, 'api');
  const db = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: 'agent-platform-api' });
  const temporal = await createTemporal(config, { lazy: true });
  // LISTEN needs a session of its own: DATABASE_LISTEN_URL when DATABASE_URL is a transaction-mode pooler.
  const deltaHub = createDeltaHub(listenUrlOf(config), logger);
  const services = createServices({
    config,
    db,
    temporal,
    secrets: createSecretBox(config.SECRET_ENCRYPTION_KEY),
    deltaHub,
    embed: buildEmbedder(config, logger),
    logger,
  });
  const app = createApp({ config, db, temporal, logger, metrics: createMetrics(), services });

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
