/**
 * Asking how it went: once a person resolved the conversation, the widget's poll says so (`satisfaction_asked`) until
 * the visitor answers or writes again; the answer is kept once per resolution and shown to operators as an event.
 */
import { describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession } from '../support/helpers';
import { widgetCall, widgetSession } from '../support/widget';

async function handedOver(bot: BootstrapResult) {
  const visitor = await widgetSession(bot);
  const { session_id, visitor_token: token } = visitor;
  const asked = await widgetCall(bot, '/v1/widget/handoff', { method: 'POST', body: { session_id }, token });
  expect(asked.status).toBe(200);
  const reply = await http(`/v1/api/operator/threads/${session_id}/reply`, {
    key: bot.keys.secret_key,
    body: { text: 'Your parcel leaves today.' },
  });
  expect(reply.status).toBe(200);
  return visitor;
}

const poll = (bot: BootstrapResult, visitor: { session_id: string; visitor_token: string }) =>
  widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, { token: visitor.visitor_token });

const resolve = (bot: BootstrapResult, sessionId: string) =>
  http(`/v1/api/operator/threads/${sessionId}/resolve`, { key: bot.keys.secret_key, method: 'POST' });

const answer = (
  bot: BootstrapResult,
  visitor: { session_id: string; visitor_token: string },
  body: Record<string, unknown>,
) =>
  widgetCall(bot, '/v1/widget/satisfaction', {
    method: 'POST',
    body: { session_id: visitor.session_id, ...body },
    token: visitor.visitor_token,
  });

describe('how it went, after a person resolved the conversation', () => {
  it('is asked once resolved, recorded once per resolution, and shown to operators', async () => {
    const bot = await newBot();
    const visitor = await handedOver(bot);
    expect((await poll(bot, visitor)).body.satisfaction_asked).toBeUndefined();
    // Nothing resolved yet: nothing to rate.
    const early = await answer(bot, visitor, { score: 5 });
    expect([early.status, early.body.code]).toEqual([409, 'conflict']);

    const before = Date.now();
    expect((await resolve(bot, visitor.session_id)).status).toBe(200);
    const asked = (await poll(bot, visitor)).body.satisfaction_asked;
    expect(asked.resolved_at).toBeGreaterThanOrEqual(before - 1000);

    expect((await answer(bot, visitor, { score: 4, comment: '  Quick and kind  ' })).status).toBe(200);
    expect((await poll(bot, visitor)).body.satisfaction_asked).toBeUndefined();
    // Answering again replaces the answer: one event per resolution.
    expect((await answer(bot, visitor, { score: 5 })).status).toBe(200);

    const thread = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`, {
      headers: await ownerSession(bot),
    });
    expect(thread.status).toBe(200);
    const events = thread.body.messages.filter(
      (m: { author: string; event?: { kind: string } }) => m.author === 'event' && m.event?.kind === 'satisfaction',
    );
    expect(events).toHaveLength(1);
    expect(events[0].text).toBe('Rated the help 5/5 (very good)');
    // The visitor's own transcript never shows it.
    const visible = (await poll(bot, visitor)).body.messages.map((m: { author: string }) => m.author);
    expect(visible).not.toContain('event');
  });

  it('is no longer asked once the visitor writes again', async () => {
    const bot = await newBot();
    const visitor = await handedOver(bot);
    await resolve(bot, visitor.session_id);
    expect((await poll(bot, visitor)).body.satisfaction_asked).toBeDefined();
    const chat = await widgetCall(bot, '/v1/widget/chat', {
      method: 'POST',
      body: { session_id: visitor.session_id, message: 'One more question' },
      token: visitor.visitor_token,
    });
    expect(chat.status).toBe(200);
    expect((await poll(bot, visitor)).body.satisfaction_asked).toBeUndefined();
  });

  it('refuses a score outside 1–5 and a comment that is too long, in the contract’s shape', async () => {
    const bot = await newBot();
    const visitor = await handedOver(bot);
    await resolve(bot, visitor.session_id);
    for (const body of [{ score: 0 }, { score: 6 }, { score: 2.5 }, {}, { score: 3, comment: 'x'.repeat(2001) }]) {
      const res = await answer(bot, visitor, body);
      expect([JSON.stringify(body).slice(0, 30), res.status, res.body.code]).toEqual([
        JSON.stringify(body).slice(0, 30),
        400,
        'bad_request',
      ]);
    }
    // The public API's poll is the contract's: no widget field.
    const api = await http(`/v1/api/messages?session_id=${visitor.session_id}`, { key: bot.keys.secret_key });
    expect(api.body.satisfaction_asked).toBeUndefined();
  });
});
