import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type OwnPlatform, http, newBot, ownerSession, sseFrames, startOwnPlatform } from '../support/helpers';

/**
 * With no LLM configured the platform answers extractively: the best-matching knowledge passages, stated as such
 * (docs/architecture.md, The design this code keeps). Its own worker and API without OPENAI_API_KEY, sharing the run's Postgres and Temporal.
 */
describe('extractive answers without an LLM', () => {
  let own: OwnPlatform;
  let baseUrl: string;

  beforeAll(async () => {
    own = await startOwnPlatform('extractive', { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined });
    baseUrl = own.baseUrl;
  }, 120_000);

  afterAll(async () => own?.stop());

  it('quotes the knowledge passage that answers the question', async () => {
    const bot = await newBot();
    const write = await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      body: {
        title: 'Opening hours',
        text: 'The shop on Elm Street opens at nine in the morning and closes at six in the evening.',
      },
      baseUrl,
    });
    expect(write.status).toBe(202);
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { message: 'When does the shop open?' },
      baseUrl,
    });
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain('Here is what the knowledge base says');
    expect(res.body.answer).toContain('opens at nine in the morning');
    // The passages it quotes are its sources.
    expect(res.body.sources).toEqual([{ ref: 1, source_id: write.body.source_id, title: 'Opening hours' }]);

    const stream = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { message: 'When does the shop close?' },
      baseUrl,
    });
    const text = stream.frames
      .filter((f) => 'delta' in f)
      .map((f) => f.delta)
      .join('');
    expect(text).toContain('closes at six in the evening');
    expect(stream.frames.at(-1)).toMatchObject({ done: true });
  });

  it("briefs the operator from the visitor's own words on a hand-over", async () => {
    const bot = await newBot();
    await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      body: { title: 'Delivery', text: 'Parcels to Norway take five working days.' },
      baseUrl,
    });
    const session = randomUUID();
    const ask = (message: string, escalate?: boolean) =>
      http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message, escalate }, baseUrl });
    await ask('How long do parcels to Norway take?');
    expect((await ask('Mine is three weeks late', true)).body.handoff).toBe(true);
    const thread = await http(`/v1/api/operator/threads/${session}`, { key: bot.keys.secret_key, baseUrl });
    expect(thread.body.briefing.text).toMatch(
      /^Asked: “How long do parcels to Norway take\?”\nLatest: “Mine is three weeks late”\nThe agent's last answer: “Here is what the knowledge base says about this: • Delivery: Parcels to Norway take five working days\.”$/,
    );
  });

  it('says plainly when nothing matches', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { message: 'Tell me about quantum chromodynamics' },
      baseUrl,
    });
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain("couldn't find anything");
    expect(res.body.answer).toContain('No AI model is configured');
    // A question nothing answers is one the agent cannot answer: with handoff on (the default) it offers a person.
    expect(res.body.answer).toMatch(/Would you like to talk to a person from the team\?$/);
    expect(res.body.handoff_offered).toBe(true);
    expect(res.body).not.toHaveProperty('sources');
    // And it is among what is missing, for the owner to answer.
    const gaps = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: await ownerSession(bot), baseUrl });
    expect(gaps.body.groups).toEqual([
      expect.objectContaining({ question: 'Tell me about quantum chromodynamics', count: 1 }),
    ]);
  });
});
