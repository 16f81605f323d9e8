import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, newBot, ownerSession } from '../support/helpers';

/** The team learns that a visitor asked for a person without watching the inbox (the dashboard's shell). */
describe('a request for a person, off the inbox', () => {
  it('is a notification naming the agent and what the visitor said, once, and counts as waiting until someone answers', async () => {
    const bot = await newBot({ botName: 'Alert bot' });
    const owner = await ownerSession(bot);
    const session = randomUUID();
    const notifications = async () => {
      const res = await http('/v1/dashboard/notifications', { headers: owner });
      expect(res.status).toBe(200);
      return res.body as {
        notifications: { kind: string; title: string; body: string; bot_id: string; data: Record<string, unknown> }[];
        unread: number;
        waiting_requests: number;
      };
    };
    expect((await notifications()).waiting_requests).toBe(0);

    const chat = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'My parcel never arrived' },
    });
    expect(chat.status).toBe(200);
    const handoff = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(handoff.status).toBe(200);
    // Asked again while waiting: the same request, not a second one.
    await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });

    const after = await notifications();
    const requests = after.notifications.filter((n) => n.kind === 'handoff_requested');
    expect(requests).toEqual([
      {
        id: expect.stringMatching(/^ntf_dlv_/),
        kind: 'handoff_requested',
        title: 'A visitor asked for a person',
        body: 'Alert bot: My parcel never arrived',
        bot_id: bot.bot_id,
        data: { session_id: session },
        created_at: expect.any(Number),
        read_at: null,
      },
    ]);
    expect(after.unread).toBeGreaterThanOrEqual(1);
    expect(after.waiting_requests).toBe(1);

    // A person answers: nobody is waiting any more (the notification stays, as the record of the request).
    const reply = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hello, I am looking into it.' },
    });
    expect(reply.status).toBe(200);
    const answered = await notifications();
    expect(answered.waiting_requests).toBe(0);
    expect(answered.notifications.filter((n) => n.kind === 'handoff_requested')).toHaveLength(1);
  });

  it('is not raised when an operator takes over a conversation the bot was answering', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const session = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'hi' } });
    const reply = await http(`/v1/api/operator/threads/${session}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'A person here.' },
    });
    expect(reply.status).toBe(200);
    const res = await http('/v1/dashboard/notifications', { headers: owner });
    expect(res.body.notifications.filter((n: { kind: string }) => n.kind === 'handoff_requested')).toEqual([]);
    expect(res.body.waiting_requests).toBe(0);
  });
});
