import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type TemporalServer, startTemporalServer } from '../../lib/stack/temporal-server';
import {
  type OwnPlatform,
  http,
  newBot,
  startOwnPlatform,
  testDb,
  transcriptOf,
  waitUntil,
  turnRunning,
} from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * The real Temporal server restarted while the platform runs (test/http/temporal-outage.test.ts has the dev server's
 * case): what an operator's upgrade of the server does to visitors. A server of its own (its four services on a
 * Postgres of their own), with an API and a worker of their own on it, so that stopping it disturbs no other file.
 */
describe('the real Temporal server restarted while the platform runs', () => {
  let temporal: TemporalServer;
  let own: OwnPlatform;

  beforeAll(async () => {
    temporal = await startTemporalServer({
      dataDir: path.join(stackInfo().dataDir, `temporal-restart-${process.pid}`),
      namespace: stackInfo().namespace,
      quiet: true,
    });
    own = await startOwnPlatform('temporal-restart', {
      TEMPORAL_ADDRESS: temporal.address,
      LLM_TURN_TIMEOUT_MS: '30000',
    });
  }, 240_000);

  afterAll(async () => {
    await own?.stop();
    await temporal?.stop();
  });

  const chat = (key: string, message: string, session = randomUUID()) =>
    http('/v1/api/chat', { key, body: { session_id: session, message }, baseUrl: own.baseUrl });

  it('a turn in flight is answered, a chat during the stop is 503 within 5 s, and chats work again soon after', async () => {
    const bot = await newBot();
    expect((await chat(bot.keys.secret_key, 'before')).status).toBe(200);
    await testDb().query(`UPDATE bots SET model = 'fake-slow-2000' WHERE id = $1`, [bot.bot_id]);
    const session = randomUUID();
    const pending = chat(bot.keys.secret_key, 'outlast the upgrade', session);
    await turnRunning(bot.bot_id);

    // The services stop (the frontend first), stay down 8 s, and start again on their database.
    const frontend = temporal.processes.frontend.child;
    const restarted = temporal.restart(8_000);
    await waitUntil('the frontend to be stopped', async () => frontend.exitCode !== null || !!frontend.signalCode);
    const sent = Date.now();
    const down = await chat(bot.keys.secret_key, 'during');
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('service_unavailable');
    expect(down.headers.get('retry-after')).toBe('2');

    await restarted;
    const back = Date.now();
    await waitUntil(
      'a chat to be answered again',
      async () => (await chat(bot.keys.secret_key, 'after')).status === 200,
      30_000,
    );
    expect(Date.now() - back).toBeLessThan(10_000);

    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Fake answer: outlast the upgrade');
    expect(await transcriptOf(session)).toEqual([
      { author: 'visitor', text: 'outlast the upgrade' },
      { author: 'bot', text: res.body.answer },
    ]);
  }, 180_000);
});
