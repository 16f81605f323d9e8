import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { ESCALATION_CONFIRMATION } from '../../workflows/conversation';
import { http, newBot, testDb, waitUntil } from '../support/helpers';
import { startWebhookReceiver, verifyDelivery } from '../support/webhook-receiver';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

async function botWithWebhook(receiver: Receiver, opts: { handoff?: boolean } = {}): Promise<BootstrapResult> {
  const bot = await newBot();
  await testDb().query(`UPDATE bots SET handoff_webhook_url = $2, handoff_enabled = $3 WHERE id = $1`, [
    bot.bot_id,
    receiver.url,
    opts.handoff ?? true,
  ]);
  return bot;
}

const chat = (bot: BootstrapResult, body: Record<string, unknown>) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body });
const poll = (bot: BootstrapResult, session: string, cursor?: string) =>
  http(`/v1/api/messages?session_id=${session}${cursor ? `&cursor=${cursor}` : ''}`, { key: bot.keys.secret_key });

describe('handoff lifecycle: bot → waiting → operator → bot', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([200]);
  });
  afterAll(() => receiver.close());

  it('escalate:true hands over with a confirmation, forwards later messages, and resolve gives the bot back', async () => {
    const bot = await botWithWebhook(receiver);
    const session = randomUUID();
    expect((await chat(bot, { session_id: session, message: 'My order is late' })).status).toBe(200);

    const escalated = await chat(bot, { session_id: session, message: 'Please help', escalate: true });
    expect(escalated.body).toEqual({ answer: ESCALATION_CONFIRMATION, session_id: session, handoff: true });
    expect((await poll(bot, session)).body.status).toBe('waiting');

    const forwarded = await chat(bot, { session_id: session, message: 'Are you there?' });
    expect(forwarded.body).toEqual({ answer: '', session_id: session, handoff: true });

    // The bot stayed silent: no bot message after the confirmation.
    const before = (await poll(bot, session)).body.messages.map(
      (m: { author: string; text: string }) => `${m.author}:${m.text}`,
    );
    expect(before.slice(-2)).toEqual([`bot:${ESCALATION_CONFIRMATION}`, 'visitor:Are you there?']);

    const reply = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hi, I am Anna from support' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: expect.any(String), at: expect.any(Number), status: 'operator' });
    const afterReply = await poll(bot, session);
    expect(afterReply.body.status).toBe('operator');
    expect(afterReply.body.messages.at(-1)).toMatchObject({ author: 'operator', text: 'Hi, I am Anna from support' });

    const resolved = await http(`/v1/api/operator/threads/${session}/resolve`, {
      key: bot.keys.secret_key,
      method: 'POST',
    });
    expect(resolved.body).toEqual({ status: 'bot', resolved: true });
    const again = await chat(bot, { session_id: session, message: 'Thanks, one more question' });
    expect(again.body.answer).toContain('Fake answer');
    expect(again.body.handoff).toBeUndefined();

    const sessionDeliveries = (await receiver.waitFor(3)).filter((d) => d.body.session_id === session);
    const events = sessionDeliveries.map((d) => d.body.event);
    expect(events).toEqual(['escalated', 'visitor_message', 'resolved']);
    const [esc, msg, res] = sessionDeliveries;
    expect(esc.body).toEqual({
      event: 'escalated',
      bot_id: bot.bot_id,
      session_id: session,
      transcript: expect.any(String),
      reason: 'requested',
      briefing: expect.stringContaining('Please help'),
      briefing_source: 'model',
      at: expect.any(Number),
    });
    expect(esc.body.transcript).toContain('Visitor: My order is late');
    expect(esc.body.transcript).toContain('Visitor: Please help');
    expect(msg.body).toMatchObject({ event: 'visitor_message', text: 'Are you there?' });
    expect(res.body).toMatchObject({ event: 'resolved', bot_id: bot.bot_id });
    for (const d of sessionDeliveries) {
      expect(verifyDelivery(d, bot.keys.handoff_webhook_secret)).toBe(true);
      expect(d.headers['x-service-timestamp']).toMatch(/^\d+$/);
    }
  });

  it('an operator who takes over a conversation the bot was answering hands it over: escalated comes before resolved', async () => {
    const bot = await botWithWebhook(receiver);
    const session = randomUUID();
    expect((await chat(bot, { session_id: session, message: 'Do you ship to Norway?' })).status).toBe(200);
    const reply = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hello, a person here: yes we do.' },
    });
    expect(reply.body.status).toBe('operator');
    await http(`/v1/api/operator/threads/${session}/resolve`, { key: bot.keys.secret_key, method: 'POST' });
    const events = await waitUntil('escalated and resolved', async () => {
      const got = receiver.received.filter((d) => d.body.session_id === session).map((d) => d.body);
      return got.length >= 2 ? got : undefined;
    });
    expect(events.map((e) => e.event)).toEqual(['escalated', 'resolved']);
    expect(events[0].reason).toBe('operator');
    expect(events[0].transcript).toContain('Visitor: Do you ship to Norway?');
    expect(events[0].transcript).toContain('Operator: Hello, a person here: yes we do.');
  });

  it('a visitor asking for a person in plain text is handed over', async () => {
    const bot = await botWithWebhook(receiver);
    const session = randomUUID();
    const res = await chat(bot, { session_id: session, message: 'Хочу поговорить с живым человеком' });
    expect(res.body).toMatchObject({ handoff: true, answer: ESCALATION_CONFIRMATION });
  });

  it('POST /handoff answers {status: waiting} and emits escalated', async () => {
    const bot = await botWithWebhook(receiver);
    const session = randomUUID();
    await chat(bot, { session_id: session, message: 'hello' });
    const res = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'waiting' });
    await receiver.waitFor(1);
    const deadline = Date.now() + 10_000;
    while (!receiver.received.some((d) => d.body.session_id === session) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.find((d) => d.body.session_id === session)?.body.event).toBe('escalated');
  });

  it('with handoff disabled: escalate is answered by the bot and POST /handoff is 404', async () => {
    const bot = await botWithWebhook(receiver, { handoff: false });
    const session = randomUUID();
    const res = await chat(bot, { session_id: session, message: 'talk to a human please', escalate: true });
    expect(res.body.handoff).toBeUndefined();
    expect(res.body.answer).toContain('Fake answer');
    const handoff = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(handoff.status).toBe(404);
    expect(handoff.body.code).toBe('not_found');
  });

  it("POST /handoff of another bot's session is 404, and changes nothing there", async () => {
    const bot = await botWithWebhook(receiver);
    const other = await newBot();
    const session = randomUUID();
    await chat(other, { session_id: session, message: 'mine' });
    const res = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: other.keys.secret_key });
    expect(poll.body.status).toBe('bot');
  });

  it('POST /handoff before any message (a "talk to a person" button) starts the conversation in waiting and sends escalated', async () => {
    const bot = await botWithWebhook(receiver);
    const session = randomUUID();
    const res = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'waiting' });
    const events = await waitUntil('escalated delivery', async () => {
      const got = receiver.received.filter((r) => r.body.session_id === session);
      return got.length ? got : undefined;
    });
    expect(events.map((e) => e.body.event)).toEqual(['escalated']);
    expect(events[0].body.bot_id).toBe(bot.bot_id);
    // The session is now this bot's: the operator API lists it, and the visitor's first message is forwarded.
    const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
    expect(threads.body.threads.map((t: { session_id: string }) => t.session_id)).toContain(session);
    const msg = await chat(bot, { session_id: session, message: 'hello, anyone there?' });
    expect(msg.body).toMatchObject({ answer: '', handoff: true });
  });
});

describe('operator API', () => {
  it('lists open requests with pagination, and the transcript includes events that polling never shows', async () => {
    const bot = await newBot();
    const sessions = [randomUUID(), randomUUID(), randomUUID()];
    for (const s of sessions) await chat(bot, { session_id: s, message: 'need a person', escalate: true });
    await testDb().query(
      `INSERT INTO messages (id, session_id, bot_id, author, text, event, at) VALUES ($1, $2, $3, 'event', 'Rated down', $4, $5)`,
      [
        `msg_evt_${randomUUID()}`,
        sessions[0],
        bot.bot_id,
        JSON.stringify({ kind: 'rating', rating: 'down', ref: 'msg_x' }),
        Date.now(),
      ],
    );

    const page1 = await http('/v1/api/operator/threads?limit=2', { key: bot.keys.secret_key });
    expect(page1.status).toBe(200);
    expect(page1.body.threads).toHaveLength(2);
    expect(page1.body.next_cursor).not.toBe('');
    const page2 = await http(`/v1/api/operator/threads?limit=2&cursor=${page1.body.next_cursor}`, {
      key: bot.keys.secret_key,
    });
    expect(page2.body.threads).toHaveLength(1);
    expect(page2.body.next_cursor).toBe('');
    const listed = [...page1.body.threads, ...page2.body.threads]
      .map((t: { session_id: string }) => t.session_id)
      .sort();
    expect(listed).toEqual([...sessions].sort());
    expect(page1.body.threads[0]).toMatchObject({
      status: 'waiting',
      escalated_at: expect.any(Number),
      last_message: expect.objectContaining({ author: 'bot' }),
    });

    const transcript = await http(`/v1/api/operator/threads/${sessions[0]}`, { key: bot.keys.secret_key });
    expect(transcript.body.messages.map((m: { author: string }) => m.author)).toEqual(['visitor', 'bot', 'event']);
    expect(transcript.body.messages[2].event).toEqual({ kind: 'rating', rating: 'down', ref: 'msg_x' });
    const visitorView = await poll(bot, sessions[0]);
    expect(visitorView.body.messages.map((m: { author: string }) => m.author)).toEqual(['visitor', 'bot']);
  });

  it('operator_here is true once an operator opened a waiting conversation', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await chat(bot, { session_id: session, message: 'person please', escalate: true });
    expect((await poll(bot, session)).body.operator_here).toBeUndefined();
    await http(`/v1/api/operator/threads/${session}`, { key: bot.keys.secret_key });
    expect((await poll(bot, session)).body).toMatchObject({ status: 'waiting', operator_here: true });
  });

  it('operator_typing goes off by itself about 6 seconds after the last signal', async () => {
    const bot = await newBot();
    const session = randomUUID();
    await chat(bot, { session_id: session, message: 'person please', escalate: true });
    const typing = await http(`/v1/api/operator/threads/${session}/typing`, {
      key: bot.keys.secret_key,
      method: 'POST',
    });
    expect(typing.body).toEqual({ status: 'ok' });
    expect((await poll(bot, session)).body.operator_typing).toBe(true);
    await new Promise((r) => setTimeout(r, 4_500));
    expect((await poll(bot, session)).body.operator_typing).toBe(true);
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await poll(bot, session)).body.operator_typing).toBe(false);
  }, 20_000);

  it('another bot never sees the thread', async () => {
    const bot = await newBot();
    const other = await newBot();
    const session = randomUUID();
    await chat(bot, { session_id: session, message: 'person please', escalate: true });
    expect((await http(`/v1/api/operator/threads/${session}`, { key: other.keys.secret_key })).status).toBe(404);
    expect(
      (await http(`/v1/api/operator/threads/${session}/reply`, { key: other.keys.secret_key, body: { text: 'x' } }))
        .status,
    ).toBe(404);
    expect((await http('/v1/api/operator/threads', { key: other.keys.secret_key })).body.threads).toEqual([]);
    expect((await poll(other, session)).body.messages).toEqual([]);
  });
});
