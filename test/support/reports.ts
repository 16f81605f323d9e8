import { expect } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http } from './helpers';
import { widgetCall, widgetSession } from './widget';

/** What the owner's reports are read from (issue 21, items 5 and 6): conversations with every outcome, seeded. */

/** The fake model's turn that says it cannot answer (test/support/fake-openai.ts). */
export const GIVES_UP = '[[fake:tool-call:cannot_answer]]';

export type Visit = Awaited<ReturnType<typeof visit>>;

/** A widget visitor's turn; returns the session and the answer's message id. */
export async function visit(bot: BootstrapResult, message: string) {
  const visitor = await widgetSession(bot);
  const said = await widgetCall(bot, '/v1/widget/chat', {
    method: 'POST',
    token: visitor.visitor_token,
    body: { session_id: visitor.session_id, message },
  });
  expect(said.status).toBe(200);
  return { ...visitor, messageId: said.body.message_id as string };
}

/** The visitor rates the answer of their turn. */
export async function rate(bot: BootstrapResult, v: Visit, rating: 'up' | 'down'): Promise<void> {
  const res = await widgetCall(bot, '/v1/widget/rating', {
    method: 'POST',
    token: v.visitor_token,
    body: { session_id: v.session_id, ref: v.messageId, rating },
  });
  expect(res.status).toBeLessThan(300);
}

/**
 * The agent's knowledge (shipping times, a warranty) and its conversations: two answers about shipping, rated helpful
 * and not; three questions it could not answer, two of them the same question in other words; one handed over,
 * resolved by a person, the visitor's satisfaction 4 with the comment "Quick and kind". With `returnsRatedDown`, a
 * third source (a returns policy) whose one answer was rated down.
 */
export async function seedReports(bot: BootstrapResult, opts: { returnsRatedDown?: boolean } = {}): Promise<void> {
  const sources = [
    ['shipping', 'Shipping times', 'Parcels leave every weekday.\nFACT: parcels ship within two days'],
    ['warranty', 'Warranty', 'The warranty covers two years.'],
    ...(opts.returnsRatedDown
      ? [['returns', 'Returns policy', 'Returns are accepted.\nFACT: returns are free within 30 days']]
      : []),
  ];
  for (const [source_id, title, text] of sources) {
    await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id, title, text } });
  }
  await rate(bot, await visit(bot, '[[fake:cite]] How fast do parcels ship?'), 'up');
  await rate(bot, await visit(bot, '[[fake:cite]] When do parcels ship out?'), 'down');
  if (opts.returnsRatedDown) await rate(bot, await visit(bot, '[[fake:cite]] Are returns free?'), 'down');
  await visit(bot, `${GIVES_UP} Do you sell gift cards?`);
  await visit(bot, `${GIVES_UP} Can I buy a gift card?`);
  await visit(bot, `${GIVES_UP} What is your phone number?`);
  const handed = await widgetSession(bot);
  await widgetCall(bot, '/v1/widget/handoff', {
    method: 'POST',
    token: handed.visitor_token,
    body: { session_id: handed.session_id },
  });
  await http(`/v1/api/operator/threads/${handed.session_id}/reply`, {
    key: bot.keys.secret_key,
    body: { text: 'Sorted, your parcel is on its way.' },
  });
  await http(`/v1/api/operator/threads/${handed.session_id}/resolve`, { key: bot.keys.secret_key, method: 'POST' });
  const said = await widgetCall(bot, '/v1/widget/satisfaction', {
    method: 'POST',
    token: handed.visitor_token,
    body: { session_id: handed.session_id, score: 4, comment: 'Quick and kind' },
  });
  expect(said.status).toBeLessThan(300);
}
