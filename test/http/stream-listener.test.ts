import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { startApi, waitForApi } from '../../stack/platform';
import { type ManagedProcess, freePort } from '../../stack/processes';
import { newBot, sseFrames, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Streaming needs Postgres LISTEN on a session of its own, which a transaction-mode pooler cannot give: an operator
 * with such a pooler in DATABASE_URL points DATABASE_LISTEN_URL at the database directly (README, Configure it). An
 * API of this file's own, on the stack's worker and task queue, whose listen address is told apart by its
 * application_name.
 */
describe('DATABASE_LISTEN_URL', () => {
  const name = `listen-${randomBytes(4).toString('hex')}`;
  let api: ManagedProcess;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    const listenUrl = new URL(stackInfo().databaseUrl);
    listenUrl.searchParams.set('application_name', name);
    baseUrl = `http://127.0.0.1:${port}`;
    api = startApi(
      { ...stackInfo().env, PORT: String(port), DATABASE_LISTEN_URL: listenUrl.href },
      { quiet: true, name: 'api-listen' },
    );
    await waitForApi(baseUrl, api);
  }, 120_000);

  afterAll(async () => api?.stop());

  it("is the address of the API's LISTEN connection; streams arrive through it", async () => {
    const bot = await newBot();
    const session = randomUUID();
    const res = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: '[[fake:pace-100-600-8]] stream through the listen address' },
      baseUrl,
    });
    expect(res.status).toBe(200);
    const text = res.frames.map((f) => f.delta ?? '').join('');
    expect(text).toContain('Fake answer:');
    expect(res.frames.at(-1)).toMatchObject({ done: true, session_id: session });
    const listening = await testDb().query(`SELECT query FROM pg_stat_activity WHERE application_name = $1`, [name]);
    expect(listening.rows).toEqual([{ query: 'LISTEN agent_deltas' }]);
  });
});
