import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { type ManagedProcess, freePort } from '../../lib/stack/processes';
import { startApi, startWorker, waitForApi } from '../../lib/stack/platform';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Its own API and worker on a task queue of their own (same Postgres and Temporal), so killing the worker
 * disturbs no other test.
 */
describe('a worker killed in the middle of a turn', () => {
  let api: ManagedProcess;
  let worker: ManagedProcess;
  let env: Record<string, string>;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    env = {
      ...stackInfo().env,
      TEMPORAL_TASK_QUEUE: `crash-test-${randomBytes(4).toString('hex')}`,
      PORT: String(port),
      // Long enough that the turn outlives the worker's replacement (the workflow task of the dead worker
      // times out after 10 s before the new worker takes it).
      LLM_TURN_TIMEOUT_MS: '40000',
    };
    worker = await startWorker(env, { quiet: true });
    api = startApi(env, { quiet: true });
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForApi(baseUrl, api);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
  });

  it('completes after a new worker starts, and the conversation is consistent', async () => {
    const bot = await newBot();
    // The model takes 3 s: the worker dies while the answer is being generated.
    await testDb().query(`UPDATE bots SET model = 'fake-slow-3000' WHERE id = $1`, [bot.bot_id]);
    const session = randomUUID();
    const pending = http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'survive this' }, baseUrl });

    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const run = await testDb().query(`SELECT status FROM runs WHERE bot_id = $1`, [bot.bot_id]);
      if (run.rows[0]?.status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 500));
    await worker.stop('SIGKILL');
    worker = await startWorker(env, { quiet: true });

    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain('Fake answer: survive this');

    const messages = await testDb().query(`SELECT author, text FROM messages WHERE session_id = $1 ORDER BY seq`, [session]);
    expect(messages.rows.map((m) => m.author)).toEqual(['visitor', 'bot']);
    expect(messages.rows[1].text).toBe(res.body.answer);
    const runs = await testDb().query(`SELECT status FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows).toEqual([{ status: 'done' }]);
  }, 90_000);
});
