import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ESCALATION_CONFIRMATION } from '../../workflows/conversation';
import { http, newBot, sseFrames, testDb } from '../support/helpers';

const withModel = async (model: string) => {
  const bot = await newBot();
  await testDb().query(`UPDATE bots SET model = $2 WHERE id = $1`, [bot.bot_id, model]);
  return bot;
};

describe('POST /v1/api/chat/stream', () => {
  it('sends fragments that add up to the answer, then the end frame last', async () => {
    const bot = await newBot();
    const session = randomUUID();
    // A model that answers over time, as a real one does (first piece at 100 ms, the last at 800 ms): the answer
    // reaches the client in several fragments. (All at once, it may arrive in one: fragments follow the model.)
    const res = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: '[[fake:pace-100-800-8]] Tell me a long story about streams' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const fragments = res.frames.filter((f) => 'delta' in f);
    expect(fragments.length).toBeGreaterThan(1);
    const text = fragments.map((f) => f.delta).join('');
    expect(text).toContain('Fake answer: Tell me a long story about streams');
    expect(res.frames.at(-1)).toEqual({ done: true, session_id: session, handoff: false, quota_exceeded: false });
    expect(res.frames.filter((f) => f.done)).toHaveLength(1);
    // The transcript holds exactly what was streamed.
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
    expect(poll.body.messages.at(-1)).toMatchObject({ author: 'bot', text });
  });

  it.each([
    ['fake-fail-401', 'llm_unavailable'],
    ['fake-fail-429', 'llm_overloaded'],
  ])('with %s: an error frame with code %s, then the end frame', async (model, code) => {
    const bot = await withModel(model);
    const res = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(res.status).toBe(200);
    const [error, end] = res.frames;
    expect(error).toMatchObject({ error: expect.any(String), code });
    if (code === 'llm_overloaded') expect(error.retry_after).toBe(2);
    else expect(error.retry_after).toBeUndefined();
    expect(end).toMatchObject({ done: true, handoff: false, quota_exceeded: false });
    expect(res.frames).toHaveLength(2);
  });

  it('an internal failure is an error frame without code, then the end frame', async () => {
    const bot = await withModel('fake-malformed');
    const res = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(res.frames[0]).toEqual({ error: expect.any(String) });
    expect(res.frames.at(-1)).toMatchObject({ done: true });
  });

  it('exhausted quota arrives as an ordinary fragment with notice: outage, repeated in the end frame', async () => {
    const bot = await newBot({ monthlyConversationQuota: 0 });
    const res = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(res.frames).toEqual([
      { delta: expect.any(String), notice: 'outage' },
      { done: true, session_id: expect.any(String), handoff: false, quota_exceeded: true, notice: 'outage' },
    ]);
  });

  it('escalation arrives as a fragment; with a person live there is no fragment, only the end frame', async () => {
    const bot = await newBot();
    const session = randomUUID();
    const escalated = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'help', escalate: true },
    });
    expect(escalated.frames).toEqual([
      { delta: ESCALATION_CONFIRMATION },
      { done: true, session_id: session, handoff: true, quota_exceeded: false },
    ]);
    const live = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'still there?' },
    });
    expect(live.frames).toEqual([{ done: true, session_id: session, handoff: true, quota_exceeded: false }]);
  });

  it('errors before the stream starts are ordinary JSON', async () => {
    const bot = await newBot();
    const noKey = await sseFrames('/v1/api/chat/stream', { key: '', body: { message: 'hi' } });
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.raw).code).toBe('missing_key');
    const invalid = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body: { message: '' } });
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.raw).code).toBe('bad_request');
  });

  it('an Idempotency-Key replays the whole stream', async () => {
    const bot = await newBot();
    const body = { session_id: randomUUID(), message: 'replay me' };
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body, headers });
    const second = await sseFrames('/v1/api/chat/stream', { key: bot.keys.secret_key, body, headers });
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.raw).toBe(first.raw);
    const runs = await testDb().query(`SELECT count(*)::int AS n FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows[0].n).toBe(1);
  });
});
