import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { ESCALATION_CONFIRMATION } from '../../workflows/conversation';
import { http, newBot, ownerSession } from '../support/helpers';
import { widgetCall, widgetSession } from '../support/widget';
import { ALL_DAYS, closedUntilTomorrow } from '../support/hours';

/**
 * Business hours (issue 21, item 3; docs/decisions/061-business-hours.md): outside them a handoff still queues the
 * conversation, but the visitor is told when someone will be back and asked for a contact; the inbox shows it.
 */
async function settings(bot: BootstrapResult, body: Record<string, unknown>) {
  return http(`/v1/dashboard/bots/${bot.bot_id}`, { method: 'PATCH', body, headers: await ownerSession(bot) });
}

const chat = (bot: BootstrapResult, body: Record<string, unknown>) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body });

describe('business hours', () => {
  it('are set in the agent settings, validated, and removed with null', async () => {
    const bot = await newBot();
    const { hours } = closedUntilTomorrow();
    const set = await settings(bot, { business_hours: hours });
    expect(set.status).toBe(200);
    expect(set.body.business_hours).toEqual(hours);
    for (const bad of [
      { ...hours, time_zone: 'Mars/Olympus' },
      { ...hours, open: [{ days: ['mon'], from: '17:00', to: '09:00' }] },
      { ...hours, open: [{ days: ['someday'], from: '09:00', to: '17:00' }] },
      { ...hours, open: [{ days: ['mon'], from: '9am', to: '17:00' }] },
      { ...hours, open: [] },
    ]) {
      const res = await settings(bot, { business_hours: bad });
      expect([res.status, res.body.code]).toEqual([400, 'bad_request']);
    }
    const cleared = await settings(bot, { business_hours: null });
    expect(cleared.body.business_hours).toBeNull();
  });

  it('outside them a visitor asking for a person is told when the team is back and asked for a contact', async () => {
    const bot = await newBot();
    const closed = closedUntilTomorrow();
    await settings(bot, { business_hours: closed.hours });
    const session = randomUUID();
    const res = await chat(bot, { session_id: session, message: 'Where is my parcel?', escalate: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      answer: expect.stringContaining(closed.words),
      session_id: session,
      handoff: true,
      after_hours: { back_at: closed.backAt },
    });
    expect(res.body.answer).toContain('Leave your e-mail or phone number');
    // Still queued for the team, who see it came in after hours.
    const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
    expect(threads.body.threads).toEqual([
      expect.objectContaining({
        session_id: session,
        status: 'waiting',
        escalation_reason: 'requested',
        after_hours: { back_at: closed.backAt },
      }),
    ]);
    const inbox = await http(`/v1/dashboard/inbox?bot_id=${bot.bot_id}`, { headers: await ownerSession(bot) });
    expect(inbox.body.threads[0]).toMatchObject({ session_id: session, after_hours: { back_at: closed.backAt } });
  });

  it('the handoff endpoint says so too, and the visitor reads it in the poll', async () => {
    const bot = await newBot();
    const closed = closedUntilTomorrow();
    await settings(bot, { business_hours: closed.hours });
    const session = randomUUID();
    await chat(bot, { session_id: session, message: 'Hello' });
    const res = await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: session } });
    expect(res.body).toEqual({ status: 'waiting', after_hours: { back_at: closed.backAt } });
    const poll = await http(`/v1/api/messages?session_id=${session}`, { key: bot.keys.secret_key });
    expect(poll.body.messages.at(-1)).toMatchObject({ author: 'bot', text: expect.stringContaining(closed.words) });
    // The public poll stays the contract's fields.
    expect(poll.body).not.toHaveProperty('after_hours');
  });

  it("the widget's poll says the team is away while the conversation waits (after a reload)", async () => {
    const bot = await newBot();
    const closed = closedUntilTomorrow();
    await settings(bot, { business_hours: closed.hours });
    const visitor = await widgetSession(bot);
    const handed = await widgetCall(bot, '/v1/widget/handoff', {
      method: 'POST',
      token: visitor.visitor_token,
      body: { session_id: visitor.session_id },
    });
    expect(handed.body).toEqual({ status: 'waiting', after_hours: { back_at: closed.backAt } });
    const poll = () =>
      widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, { token: visitor.visitor_token });
    expect((await poll()).body.after_hours).toEqual({ back_at: closed.backAt });
    // A person replied: the team is here, nobody is away any more.
    await http(`/v1/api/operator/threads/${visitor.session_id}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'I am here after all.' },
    });
    expect((await poll()).body).not.toHaveProperty('after_hours');
  });

  it('an agent that cannot answer and hands over says when the team is back after its answer', async () => {
    const bot = await newBot();
    const closed = closedUntilTomorrow();
    await settings(bot, { business_hours: closed.hours, when_unanswered: 'hand_over' });
    const session = randomUUID();
    const res = await chat(bot, { session_id: session, message: '[[fake:tool-call:cannot_answer]] Refund order 9?' });
    expect(res.body).toMatchObject({ handoff: true, after_hours: { back_at: closed.backAt } });
    expect(res.body.answer).toMatch(/^I'm sorry, I can't answer that from what I know\. .*\n\nOur team is away until/s);
    const transcript = await http(`/v1/api/operator/threads/${session}`, { key: bot.keys.secret_key });
    const said = transcript.body.messages.filter((m: { author: string }) => m.author === 'bot');
    expect(said.map((m: { text: string }) => m.text)).toEqual([
      expect.stringContaining("can't answer that"),
      expect.stringContaining(closed.words),
    ]);
    // In time order too (transcripts are read by time): the away words come after the answer.
    expect(said[1].at).toBeGreaterThan(said[0].at);
    // The transcript says why and when, as the thread list does.
    expect(transcript.body).toMatchObject({
      escalation_reason: 'unanswered',
      after_hours: { back_at: closed.backAt },
    });
  });

  it('within them, or with none set, a handoff is as before', async () => {
    const bot = await newBot();
    await settings(bot, {
      business_hours: { time_zone: 'Europe/Tallinn', open: [{ days: ALL_DAYS, from: '00:00', to: '24:00' }] },
    });
    const session = randomUUID();
    const res = await chat(bot, { session_id: session, message: 'Help', escalate: true });
    expect(res.body).toEqual({ answer: ESCALATION_CONFIRMATION, session_id: session, handoff: true });
    const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
    expect(threads.body.threads[0].after_hours).toBeNull();
  });
});
