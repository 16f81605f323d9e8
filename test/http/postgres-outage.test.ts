import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import { bootstrapWorkspace, type BootstrapResult } from '../../lib/accounts/service';
import { createDb } from '../../lib/db';
import { type ManagedProcess, freePort } from '../../stack/processes';
import { startApi, startWorker, waitForApi } from '../../stack/platform';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../stack/postgres';
import { createSecretBox } from '../../lib/secret-box';
import { agentctl, fakeRequests, http, transcriptOf, turnRunning } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Its own Postgres, worker and API (sharing the run's Temporal, on a task queue of their own), so stopping the
 * database disturbs no other test.
 */
describe('Postgres stopped while the API runs', () => {
  let pgServer: EmbeddedPostgres;
  let api: ManagedProcess;
  let worker: ManagedProcess;
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
    const env = {
      ...info.env,
      DATABASE_URL: pgServer.url,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: `pg-outage-${process.pid}-${Date.now()}`,
      // Room for a turn that waits out a 10 s outage.
      LLM_TURN_TIMEOUT_MS: '30000',
    };
    worker = await startWorker(env, { quiet: true });
    api = startApi(env, { quiet: true });
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForApi(baseUrl, api);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
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
    // Retry soon, and when: the database's return cannot be known, so a short wait (every retry meanwhile is refused
    // in milliseconds).
    expect(down.headers.get('retry-after')).toBe('2');
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

  it('a turn in flight when Postgres stops for 10 s answers once the database is back, and the answer is stored', async () => {
    const db = createDb(pgServer.url, { max: 1 });
    await db.query(`UPDATE bots SET model = 'fake-slow-2000' WHERE id = $1`, [bot.bot_id]);
    const session = `outage-turn-${Date.now()}`;
    const tag = `pg-outage-${Date.now()}`;
    const pending = http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: `[[fake:tag:${tag}]]outlast the database` },
      baseUrl,
    });
    await turnRunning(bot.bot_id, db);
    await db.end();

    await pgServer.stop();
    await new Promise((r) => setTimeout(r, 10_000));
    await pgServer.restart();

    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Fake answer: outlast the database');
    // The answer was kept through the outage, not asked for again.
    expect(await fakeRequests(tag)).toHaveLength(1);
    const check = createDb(pgServer.url, { max: 1 });
    try {
      expect(await transcriptOf(session, check)).toEqual([
        { author: 'visitor', text: `[[fake:tag:${tag}]]outlast the database` },
        { author: 'bot', text: res.body.answer },
      ]);
    } finally {
      await check.end();
    }
  }, 90_000);
});
