import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type OwnPlatform, http, newBot, startOwnPlatform, testDb, turnRunning } from '../support/helpers';

/**
 * Its own API process, killed while it owns an Idempotency-Key (docs/decisions/051-idempotent-chat-turns.md): the
 * key's lease lapses and a retry takes it over in seconds, joining the turn the dead process started.
 */
describe('an API process killed while it owns an Idempotency-Key', () => {
  let own: OwnPlatform;

  beforeAll(async () => {
    own = await startOwnPlatform('api-crash', { LLM_TURN_TIMEOUT_MS: '40000' });
  }, 120_000);

  afterAll(async () => own?.stop());

  it('the key is usable again within 30 s, 409s meanwhile carry a true Retry-After, and the turn runs once', async () => {
    const bot = await newBot();
    // The model takes 8 s: the turn outlives the API that started it.
    await testDb().query(`UPDATE bots SET model = 'fake-slow-8000' WHERE id = $1`, [bot.bot_id]);
    const body = { session_id: randomUUID(), message: 'outlive the api' };
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = http('/v1/api/chat', { key: bot.keys.secret_key, body, headers, baseUrl: own.baseUrl }).then(
      (res) => res.status,
      () => 'connection lost',
    );
    await turnRunning(bot.bot_id);

    await own.restartApi('SIGKILL');
    const killedAt = Date.now();
    expect(await first).toBe('connection lost'); // the connection died with the process

    const retryAfters: number[] = [];
    let answer: { status: number; body: { answer?: string } } | undefined;
    while (Date.now() - killedAt < 30_000) {
      const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body, headers, baseUrl: own.baseUrl });
      if (res.status !== 409) {
        answer = res;
        break;
      }
      expect(res.body.code).toBe('idempotency_in_progress');
      const wait = Number(res.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(15);
      retryAfters.push(wait);
      await new Promise((r) => setTimeout(r, wait * 1000));
    }
    expect(answer?.status).toBe(200);
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(answer?.body.answer).toContain('Fake answer: outlive the api');
    // The dead owner stopped renewing: the wait named once it missed a renewal is the time to the takeover.
    expect(Math.max(...retryAfters)).toBeGreaterThan(1);

    // The retry joined the dead process's turn instead of running a second one.
    const runs = await testDb().query(`SELECT status FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows).toEqual([{ status: 'done' }]);
    const messages = await testDb().query(`SELECT author FROM messages WHERE session_id = $1 ORDER BY seq`, [
      body.session_id,
    ]);
    expect(messages.rows.map((m) => m.author)).toEqual(['visitor', 'bot']);
  });
});
