import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { parseConfig } from '../../lib/config';
import { createDb } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { createMetrics } from '../../lib/metrics';
import { createSecretBox } from '../../lib/secret-box';
import { createServices } from '../../lib/services';
import { createDeltaHub } from '../../lib/streams/listener';
import { createTemporal } from '../../lib/temporal';
import { type FakeSmtp, startFakeSmtp } from './fake-smtp';
import { stackInfo } from './stack-info';

export interface InProcessApi {
  url: string;
  close(): Promise<void>;
}

/**
 * The real API, built with `createApp` in the test's own process on a loopback port, against the stack's Postgres,
 * Temporal and worker — for settings the shared API does not have (TRUST_PROXY, METRICS_TOKEN, another trigger
 * interval). Starts in milliseconds, unlike a child process. `undefined` in `env` removes a variable.
 */
export async function startInProcessApi(env: Record<string, string | undefined>): Promise<InProcessApi> {
  const merged = { ...stackInfo().env, LOG_LEVEL: 'silent', ...env };
  const config = parseConfig(
    Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined)),
  );
  const logger = createLogger(config.LOG_LEVEL, 'api-in-test');
  const db = createDb(config.DATABASE_URL, { max: 4, applicationName: 'jest-api' });
  const temporal = await createTemporal(config, { lazy: true });
  const deltaHub = createDeltaHub(config.DATABASE_URL, logger);
  const services = createServices({
    config,
    db,
    temporal,
    secrets: createSecretBox(config.SECRET_ENCRYPTION_KEY),
    deltaHub,
    logger,
  });
  const app = createApp({ config, db, temporal, logger, metrics: createMetrics(), services });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([db.end(), deltaHub.close(), temporal.connection.close()]);
    },
  };
}

export interface MailingApi {
  smtp: FakeSmtp;
  api: InProcessApi;
  close(): Promise<void>;
}

/**
 * An in-process API that e-mails through a fake SMTP server of its own (the real nodemailer client to a real SMTP
 * peer, test/support/fake-smtp.ts): for what is only seen in an e-mail — links, subjects, who was written to.
 */
export async function startMailingApi(env: Record<string, string | undefined>): Promise<MailingApi> {
  const smtp = await startFakeSmtp();
  try {
    const api = await startInProcessApi({
      SMTP_URL: smtp.url,
      SMTP_FROM: 'Agent Platform <no-reply@platform.test>',
      ...env,
    });
    return {
      smtp,
      api,
      async close() {
        await api.close();
        await smtp.close();
      },
    };
  } catch (err) {
    await smtp.close();
    throw err;
  }
}
