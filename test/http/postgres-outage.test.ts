import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import { bootstrapWorkspace, type BootstrapResult } from '../../lib/accounts/service';
import { createDb } from '../../lib/db';
import { type ManagedProcess, freePort } from '../../lib/stack/processes';
import { startApi, waitForApi } from '../../lib/stack/platform';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../lib/stack/postgres';
import { createSecretBox } from '../../lib/secret-box';
import { agentctl, http } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Its own Postgres and API (sharing the run's Temporal), so stopping the database disturbs no other test.
 */
describe('Postgres stopped while the API runs', () => {
  let pgServer: EmbeddedPostgres;
  let api: ManagedProcess;
  let baseUrl: string;
  let bot: BootstrapResult;

  beforeAll(async () => {
    const info = stackInfo();
    pgServer = await startEmbeddedPostgres({
      dataDir: path.join(info.dataDir, `outage-pg-${process.pid}`),
      port: await freePort(),
      database: 'agent_platform',
      quiet: true,
    });
    const migrated = await agentctl(['migrate'], { DATABASE_URL: pgServer.url });
    expect(migrated).toMatchObject({ code: 0, stdout: expect.stringContaining('Applied') });
    const db = createDb(pgServer.url, { max: 1 });
    bot = await bootstrapWorkspace(db, createSecretBox(info.secretEncryptionKey));
    await db.end();
    const port = await freePort();
    api = startApi({ ...info.env, DATABASE_URL: pgServer.url, PORT: String(port), LOG_LEVEL: 'warn' }, { quiet: true });
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForApi(baseUrl, api);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await pgServer?.stop();
  });

  const poll = () => http(`/v1/api/messages?session_id=outage`, { key: bot.keys.secret_key, baseUrl });

  it('answers 503 on /readyz and service_unavailable on authenticated calls, then recovers without a restart', async () => {
    expect((await http('/readyz', { baseUrl })).status).toBe(200);
    expect((await poll()).status).toBe(200);

    await pgServer.stop();

    const ready = await http('/readyz', { baseUrl });
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ code: 'service_unavailable', checks: { temporal: 'ok' } });
    expect(ready.body.checks.postgres).toMatch(/^unavailable/);

    const down = await poll();
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: expect.any(String), code: 'service_unavailable' });
    // Liveness does not depend on the database.
    expect((await http('/healthz', { baseUrl })).status).toBe(200);

    await pgServer.restart();

    const deadline = Date.now() + 20_000;
    let readyAgain = 0;
    let pollAgain = 0;
    while (Date.now() < deadline && (readyAgain !== 200 || pollAgain !== 200)) {
      readyAgain = (await http('/readyz', { baseUrl })).status;
      pollAgain = (await poll()).status;
      if (readyAgain !== 200 || pollAgain !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(readyAgain).toBe(200);
    expect(pollAgain).toBe(200);
  }, 90_000);
});
