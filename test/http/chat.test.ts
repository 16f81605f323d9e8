import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, newBot, testDb } from '../support/helpers';

describe('POST /v1/api/chat', () => {
  it('answers through the LLM and keeps the conversation', async () => {
    const bot = await newBot();
    const session = randomUUID();
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'Hello there' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ answer: expect.stringContaining('Fake answer: Hello there'), session_id: session });
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
    expect(poll.body.messages.map((m: { author: string }) => m.author)).toEqual(['visitor', 'bot']);
    expect(poll.body.status).toBe('bot');
  });

  it('generates a session id when none is given', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(res.status).toBe(200);
    expect(res.body.session_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('records the answer as a run with trigger kind message', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'count me' } });
    const runs = await testDb().query(`SELECT trigger_kind, status, session_id, credits FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows).toEqual([{ trigger_kind: 'message', status: 'done', session_id: session, credits: expect.any(Number) }]);
    expect(runs.rows[0].credits).toBeGreaterThanOrEqual(1);
  });
});
