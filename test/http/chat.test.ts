import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { signVisitorConfirmation } from '../../lib/identity';
import { fakeRequests, http, newBot, testDb } from '../support/helpers';

describe('POST /v1/api/chat', () => {
  it('answers through the LLM and keeps the conversation', async () => {
    const bot = await newBot();
    const session = randomUUID();
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'Hello there' },
    });
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

  it('answers in full, and has the answer in the transcript, when it is too long to be announced at commit', async () => {
    const bot = await newBot();
    const session = randomUUID();
    // The fake model echoes the message: an answer of 7 980 characters (12 KB) does not fit one Postgres notification, so
    // it is announced without its text, which the API reads from the transcript (lib/announcements.ts).
    const text = 'é'.repeat(3_980) + 'z'.repeat(4_000);
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: `[[fake:echo]]${text}` },
    });
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe(text);
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
    expect(poll.body.messages.at(-1)).toMatchObject({ author: 'bot', text });
  });

  it('has the answer in the transcript by the time the response arrives', async () => {
    const bot = await newBot();
    const session = randomUUID();
    for (const message of ['first', 'second', 'third']) {
      const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message } });
      const poll = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
      expect(poll.body.messages.at(-1)).toMatchObject({ author: 'bot', text: res.body.answer });
    }
  });

  it("gives the model the conversation so far: its last 12 messages, oldest first, without the turn's own", async () => {
    const bot = await newBot();
    const session = randomUUID();
    const tag = `history-${randomUUID()}`;
    const said: { visitor: string; bot: string }[] = [];
    for (let i = 1; i <= 8; i++) {
      const message = `[[fake:tag:${tag}]] question number ${i}`;
      const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message } });
      expect(res.status).toBe(200);
      said.push({ visitor: message, bot: res.body.answer });
    }
    const requests = await fakeRequests(tag);
    expect(requests).toHaveLength(8);
    const conversation = (n: number) => requests[n].body.messages.slice(1) as { role: string; content: string }[];
    // The first turn: no history, just the question after the system prompt.
    expect(conversation(0)).toEqual([{ role: 'user', content: said[0].visitor }]);
    // The second: the first question and its answer, then the question.
    expect(conversation(1)).toEqual([
      { role: 'user', content: said[0].visitor },
      { role: 'assistant', content: said[0].bot },
      { role: 'user', content: said[1].visitor },
    ]);
    // The eighth: the twelve messages before it (turns 2 to 7), in order, then the question once.
    expect(conversation(7)).toEqual([
      ...said.slice(1, 7).flatMap((t) => [
        { role: 'user', content: t.visitor },
        { role: 'assistant', content: t.bot },
      ]),
      { role: 'user', content: said[7].visitor },
    ]);
  });

  it('records the answer as a run with trigger kind message', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'count me' } });
    const runs = await testDb().query(`SELECT trigger_kind, status, session_id, credits FROM runs WHERE bot_id = $1`, [
      bot.bot_id,
    ]);
    expect(runs.rows).toEqual([
      { trigger_kind: 'message', status: 'done', session_id: session, credits: expect.any(Number) },
    ]);
    expect(runs.rows[0].credits).toBeGreaterThanOrEqual(1);
  });
});

describe('chat validation at the limits', () => {
  it.each([
    ['message of 8000 characters', { message: 'a'.repeat(8000) }, 200],
    ['message of 8001 characters', { message: 'a'.repeat(8001) }, 400],
    ['session_id of 128 characters', { message: 'hi', session_id: 's'.repeat(128) }, 200],
    ['session_id of 129 characters', { message: 'hi', session_id: 's'.repeat(129) }, 400],
    ['empty message', { message: '' }, 400],
    ['no message', { session_id: 'x' }, 400],
    ['message of the wrong type', { message: 42 }, 400],
  ])('%s → %d', async (_label, body, status) => {
    const bot = await newBot();
    const b = body as Record<string, unknown>;
    if (b.session_id) b.session_id = `${b.session_id}`.slice(0, -8) + randomUUID().slice(0, 8); // unique, same length
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: b });
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.code).toBe('bad_request');
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { message: 'hi', page_context: 'x'.repeat(1024 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });
});

describe('sessions are bound to their bot', () => {
  it("another bot's key gets 404 on chat and an empty poll, never the conversation", async () => {
    const owner = await newBot();
    const other = await newBot();
    const session = randomUUID();
    await http('/v1/api/chat', {
      key: owner.keys.secret_key,
      body: { session_id: session, message: 'private matter' },
    });
    const chat = await http('/v1/api/chat', {
      key: other.keys.secret_key,
      body: { session_id: session, message: 'let me in' },
    });
    expect(chat.status).toBe(404);
    expect(chat.body.code).toBe('not_found');
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: other.keys.secret_key });
    expect(poll.status).toBe(200);
    expect(poll.body.messages).toEqual([]);
  });
});

describe('AI backend failures', () => {
  const withModel = async (model: string) => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET model = $2 WHERE id = $1`, [bot.bot_id, model]);
    return bot;
  };

  it.each([
    ['an invalid key', 'fake-fail-401'],
    ['no funds (429 insufficient_quota)', 'fake-insufficient-quota'],
    ['no funds (402)', 'fake-fail-402'],
  ])('%s is 503 llm_unavailable with session_id', async (_label, model) => {
    const bot = await withModel(model);
    const session = randomUUID();
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'hi' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: expect.any(String), code: 'llm_unavailable', session_id: session });
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it.each([
    ['rate limited (429)', 'fake-fail-429', 2],
    ['failing (500)', 'fake-fail-500', undefined],
    ['overloaded (503)', 'fake-fail-503', undefined],
    ['too slow for the turn', 'fake-slow-6000', undefined],
  ])('%s is 503 llm_overloaded with Retry-After and retry_after', async (_label, model, retryAfter) => {
    const bot = await withModel(model);
    const session = randomUUID();
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'hi' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: expect.any(String),
      code: 'llm_overloaded',
      session_id: session,
      retry_after: expect.any(Number),
    });
    if (retryAfter) expect(res.body.retry_after).toBe(retryAfter);
    expect(res.headers.get('retry-after')).toBe(String(res.body.retry_after));
    const run = await testDb().query(`SELECT status, error_code FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(run.rows).toEqual([{ status: 'failed', error_code: 'llm_overloaded' }]);
  });

  it("a failure that is not the backend's is 500 internal_error, without internals", async () => {
    const bot = await withModel('fake-malformed');
    const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal_error');
    expect(JSON.stringify(res.body)).not.toMatch(/SyntaxError|JSON|stack/);
  });
});

describe('monthly conversation quota', () => {
  it('new conversations get 200 quota_exceeded with a placeholder; started ones continue', async () => {
    const bot = await newBot({ monthlyConversationQuota: 1 });
    const first = randomUUID();
    expect(
      (await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: first, message: 'one' } })).body
        .quota_exceeded,
    ).toBeUndefined();
    const second = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: 'two' },
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      answer: expect.any(String),
      session_id: expect.any(String),
      quota_exceeded: true,
      notice: 'outage',
    });
    const again = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: first, message: 'still here' },
    });
    expect(again.body).toEqual({ answer: expect.stringContaining('Fake answer'), session_id: first });
  });
});

describe('visitor identity confirmation', () => {
  const visitorOf = async (botId: string, session: string) =>
    (
      await testDb().query(`SELECT visitor_user FROM conversations WHERE session_id = $1 AND bot_id = $2`, [
        session,
        botId,
      ])
    ).rows[0]?.visitor_user;

  it('the user of a valid confirmation wins over user_token; bad ones are ignored without an error', async () => {
    const bot = await newBot();
    const other = await newBot();
    const now = Math.floor(Date.now() / 1000);
    const secret = bot.keys.visitor_identity_secret;
    const cases: [string, string, string][] = [
      [
        'valid',
        signVisitorConfirmation({ user: 'alice', role: 'admin', bot: bot.bot_id, exp: now + 600 }, secret),
        'alice',
      ],
      [
        'expired',
        signVisitorConfirmation({ user: 'alice', role: 'admin', bot: bot.bot_id, exp: now - 5 }, secret),
        'token-user',
      ],
      [
        'too far ahead',
        signVisitorConfirmation({ user: 'alice', role: 'admin', bot: bot.bot_id, exp: now + 25 * 3600 }, secret),
        'token-user',
      ],
      [
        'foreign bot',
        signVisitorConfirmation({ user: 'alice', role: 'admin', bot: other.bot_id, exp: now + 600 }, secret),
        'token-user',
      ],
      [
        'wrong secret',
        signVisitorConfirmation(
          { user: 'alice', role: 'admin', bot: bot.bot_id, exp: now + 600 },
          other.keys.visitor_identity_secret,
        ),
        'token-user',
      ],
      ['malformed', 'v1.not-base64!.zz', 'token-user'],
    ];
    for (const [label, userAuth, expected] of cases) {
      const session = randomUUID();
      const res = await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { session_id: session, message: 'hi', user_token: 'token-user', user_auth: userAuth },
      });
      expect([label, res.status]).toEqual([label, 200]);
      expect([label, await visitorOf(bot.bot_id, session)]).toEqual([label, expected]);
    }
  });
});

describe('polling', () => {
  it('returns only new messages after next_cursor, ignores `after`, and refuses a forged cursor', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'first' } });
    const p1 = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
    expect(p1.body.messages).toHaveLength(2);
    const empty = await http(`/v1/api/messages?session_id=${session}&cursor=${p1.body.next_cursor}`, {
      key: bot.keys.secret_key,
    });
    expect(empty.body.messages).toEqual([]);
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'second' } });
    const p2 = await http(`/v1/api/messages?session_id=${session}&cursor=${p1.body.next_cursor}`, {
      key: bot.keys.secret_key,
    });
    expect(p2.body.messages.map((m: { text: string }) => m.text)[0]).toBe('second');
    expect(p2.body.messages).toHaveLength(2);
    const legacy = await http(`/v1/api/messages?session_id=${session}&after=${p2.body.messages[1].id}`, {
      key: bot.keys.secret_key,
    });
    expect(legacy.body.messages).toHaveLength(4);
    const forged = await http(`/v1/api/messages?session_id=${session}&cursor=12345`, { key: bot.keys.secret_key });
    expect(forged.status).toBe(400);
  });
});
