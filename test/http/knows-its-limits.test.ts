import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession, sseFrames, startActionTarget, testDb, waitUntil } from '../support/helpers';
import { startWebhookReceiver } from '../support/webhook-receiver';

/**
 * An agent that knows its limits (issue 21, item 2; docs/decisions/059-agent-knows-its-limits.md): the model
 * is given a `cannot_answer` tool; when it calls it the visitor reads so plainly and, with handoff on, is offered a
 * person (`handoff_offered`) or handed over at once (the owner's `when_unanswered`), with `reason: unanswered` on the
 * `escalated` webhook.
 */
type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

const GIVES_UP = '[[fake:tool-call:cannot_answer]]';

async function botWith(receiver: Receiver, settings: Record<string, unknown> = {}): Promise<BootstrapResult> {
  const bot = await newBot();
  await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
  if (Object.keys(settings).length) {
    const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
      method: 'PATCH',
      body: settings,
      headers: await ownerSession(bot),
    });
    expect(res.status).toBe(200);
  }
  return bot;
}

const chat = (bot: BootstrapResult, session_id: string, message: string) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id, message } });
const statusOf = async (bot: BootstrapResult, session: string) =>
  (await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key })).body.status;

describe('an agent that knows its limits', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([200]);
  });
  afterAll(() => receiver.close());

  it('says so plainly and offers a person by default; the conversation stays with the bot', async () => {
    const bot = await botWith(receiver);
    const settings = await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: await ownerSession(bot) });
    expect(settings.body.when_unanswered).toBe('offer');
    const session = randomUUID();
    const res = await chat(bot, session, `${GIVES_UP} What is the CEO's shoe size?`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      answer: "I'm sorry, I can't answer that from what I know. Would you like to talk to a person from the team?",
      session_id: session,
      handoff_offered: true,
    });
    expect(await statusOf(bot, session)).toBe('bot');
    // An ordinary answer offers nothing (another session: the fake model reads its directive in the history too);
    // the offer is not cached for the next visitor.
    const plain = await chat(bot, randomUUID(), 'Hello there');
    expect(plain.body).not.toHaveProperty('handoff_offered');
    const again = await chat(bot, randomUUID(), `${GIVES_UP} What is the CEO's shoe size?`);
    expect(again.body.handoff_offered).toBe(true);
    const runs = await testDb().query(`SELECT model FROM runs WHERE bot_id = $1`, [bot.bot_id]);
    expect(runs.rows.filter((r) => String(r.model).startsWith('cache:'))).toEqual([]);
  });

  it('hands over at once when the owner chose so: handoff, waiting, escalated with reason unanswered', async () => {
    const bot = await botWith(receiver, { when_unanswered: 'hand_over' });
    const session = randomUUID();
    const res = await chat(bot, session, `${GIVES_UP} Can you refund order 1234?`);
    expect(res.body).toEqual({
      answer:
        "I'm sorry, I can't answer that from what I know. I've asked a person from the team to help; they will reply here.",
      session_id: session,
      handoff: true,
    });
    expect(await statusOf(bot, session)).toBe('waiting');
    const escalated = await waitUntil('the escalated webhook', async () =>
      receiver.received.find((d) => d.body.session_id === session && d.body.event === 'escalated'),
    );
    expect(escalated.body).toMatchObject({ reason: 'unanswered', bot_id: bot.bot_id });
    expect(escalated.body.transcript).toMatch(/^Visitor: .*Can you refund order 1234\?$/m);
    expect(escalated.body.transcript).toContain("Bot: I'm sorry, I can't answer that");

    // The inbox says why, and the team was notified in those words.
    const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
    expect(threads.body.threads.find((t: { session_id: string }) => t.session_id === session)).toMatchObject({
      status: 'waiting',
      escalation_reason: 'unanswered',
    });
    const notes = await testDb().query(`SELECT title FROM notifications WHERE bot_id = $1`, [bot.bot_id]);
    expect(notes.rows.map((r) => r.title)).toEqual(['The agent could not answer a visitor and handed over']);
  });

  it('streams the same: the words as fragments, the offer or the handover in the end frame', async () => {
    const offering = await botWith(receiver);
    const offered = await sseFrames('/v1/api/chat/stream', {
      key: offering.keys.secret_key,
      body: { session_id: randomUUID(), message: `${GIVES_UP} Who won the 1930 world cup?` },
    });
    const text = (frames: Record<string, any>[]) =>
      frames
        .filter((f) => 'delta' in f)
        .map((f) => f.delta)
        .join('');
    expect(text(offered.frames)).toContain('Would you like to talk to a person from the team?');
    expect(offered.frames.at(-1)).toMatchObject({ done: true, handoff: false, handoff_offered: true });

    const handing = await botWith(receiver, { when_unanswered: 'hand_over' });
    const handed = await sseFrames('/v1/api/chat/stream', {
      key: handing.keys.secret_key,
      body: { session_id: randomUUID(), message: `${GIVES_UP} Who won the 1930 world cup?` },
    });
    // Said once, not repeated by the handover's fragment.
    expect(text(handed.frames)).toBe(
      "I'm sorry, I can't answer that from what I know. I've asked a person from the team to help; they will reply here.",
    );
    expect(handed.frames.at(-1)).toMatchObject({ done: true, handoff: true });
    expect(handed.frames.at(-1)).not.toHaveProperty('handoff_offered');
  });

  it('a bot with actions (its turns run as agent runs) hands over the same way', async () => {
    const target = await startActionTarget();
    try {
      const bot = await botWith(receiver, { when_unanswered: 'hand_over' });
      const added = await http(`/v1/dashboard/bots/${bot.bot_id}/actions`, {
        body: { name: 'check_stock', description: 'Checks stock', url: target.url, requires_approval: false },
        headers: await ownerSession(bot),
      });
      expect(added.status).toBe(201);
      const session = randomUUID();
      const res = await chat(bot, session, `${GIVES_UP} Do you sell moon rocks?`);
      expect(res.body).toMatchObject({ handoff: true, answer: expect.stringContaining("can't answer that") });
      expect(await statusOf(bot, session)).toBe('waiting');
      expect(target.calls).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('with handoff off it only says so', async () => {
    const bot = await botWith(receiver, { handoff_enabled: false, when_unanswered: 'hand_over' });
    const session = randomUUID();
    const res = await chat(bot, session, `${GIVES_UP} What is the CEO's shoe size?`);
    expect(res.body).toEqual({ answer: "I'm sorry, I can't answer that from what I know.", session_id: session });
    expect(await statusOf(bot, session)).toBe('bot');
  });

  it('a visitor who takes the person offered is handed over for that reason', async () => {
    const bot = await botWith(receiver);
    const session = randomUUID();
    expect((await chat(bot, session, `${GIVES_UP} Can you repair my bike?`)).body.handoff_offered).toBe(true);
    const taken = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(taken.body.status).toBe('waiting');
    const escalated = await waitUntil('the escalated webhook', async () =>
      receiver.received.find((d) => d.body.session_id === session && d.body.event === 'escalated'),
    );
    expect(escalated.body.reason).toBe('unanswered');
    const thread = await http(`/v1/api/operator/threads/${session}`, { key: bot.keys.secret_key });
    expect(thread.body.escalation_reason).toBe('unanswered');
  });

  it('a visitor asking for a person is escalated with reason requested', async () => {
    const bot = await botWith(receiver);
    const session = randomUUID();
    const res = await chat(bot, session, 'I want to talk to a human please');
    expect(res.body.handoff).toBe(true);
    const escalated = await waitUntil('the escalated webhook', async () =>
      receiver.received.find((d) => d.body.session_id === session && d.body.event === 'escalated'),
    );
    expect(escalated.body.reason).toBe('requested');
  });

  it('refuses an unknown setting', async () => {
    const bot = await newBot();
    const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
      method: 'PATCH',
      body: { when_unanswered: 'panic' },
      headers: await ownerSession(bot),
    });
    expect(res.status).toBe(400);
  });
});
