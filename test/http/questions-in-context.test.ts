import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { creditsFor } from '../../lib/runs/bookkeeping';
import { upsertSource } from '../../lib/knowledge/store';
import { LIMITS } from '../../lib/limits';
import {
  type OwnPlatform,
  fakeRequests,
  http,
  newBot,
  ownerSession,
  scriptFakeModel,
  startOwnPlatform,
  testDb,
} from '../support/helpers';

/**
 * Questions in context (docs/decisions/152-questions-in-context.md): "and how much is it?" after a question about a
 * product finds nothing about it alone; a turn searches it with what the conversation is about — the model's
 * standalone question (one short call, only for a follow-up, its tokens in the run), or without a model the visitor's
 * recent messages — and the price passage is among the answer's sources. The run keeps what it read.
 */

type Bot = Awaited<ReturnType<typeof newBot>>;

const FIRST = 'Tell me about the Lumo desk lamp';
const FOLLOW_UP = 'and how much is it?';
const PRICE = 'The Lumo desk lamp costs 49 euros, delivered in two days.';

/** A shop's knowledge: two products, each with its description and its price. */
async function shop(): Promise<Bot> {
  const bot = await newBot();
  const db = testDb();
  const sources = [
    { id: 'lamp', title: 'Lumo desk lamp', text: 'The Lumo desk lamp has three brightness levels and a USB-C port.' },
    { id: 'lamp-price', title: 'Lumo lamp price', text: PRICE },
    { id: 'clock', title: 'Orbit wall clock', text: 'The Orbit wall clock runs silently on one AA battery.' },
    { id: 'clock-price', title: 'Orbit clock price', text: 'The Orbit wall clock costs 35 euros.' },
  ];
  for (const s of sources) await upsertSource(db, { botId: bot.bot_id, sourceId: s.id, title: s.title, text: s.text });
  return bot;
}

/** The runs of a conversation in order, with what they read and used. */
async function runsOf(sessionId: string) {
  const res = await testDb().query<{
    input: string;
    prompt_tokens: number;
    completion_tokens: number;
    credits: number;
    searched_with: string | null;
    passages: { source_id: string; text: string }[] | null;
  }>(
    `SELECT input, prompt_tokens, completion_tokens, credits, searched_with, passages
       FROM runs WHERE session_id = $1 ORDER BY started_at, id`,
    [sessionId],
  );
  return res.rows;
}

const sourceIds = (body: { sources?: { source_id: string }[] }) => (body.sources ?? []).map((s) => s.source_id);

describe('a follow-up, with a model', () => {
  it('finds nothing alone; the turn searches the standalone question the model wrote, and charges its tokens', async () => {
    const bot = await shop();
    const key = bot.keys.secret_key;

    // Alone, the follow-up names nothing the knowledge knows.
    const alone = await http('/v1/api/knowledge/search', { key, body: { query: FOLLOW_UP } });
    expect(alone.status).toBe(200);
    expect(alone.body.passages).toEqual([]);

    // Turn 1 answers; turn 2's first call writes the standalone question, its second answers; turn 3 stands alone.
    const { marker, tag } = await scriptFakeModel(
      [
        { text: 'The Lumo desk lamp has three brightness levels.' },
        { text: '"How much does the Lumo desk lamp cost?"' },
        { text: 'It costs 49 euros.' },
      ],
      'in-context',
    );
    const session = randomUUID();
    const ask = (message: string) => http('/v1/api/chat', { key, body: { session_id: session, message } });

    const first = await ask(`${FIRST} ${marker}`);
    expect(first.status).toBe(200);
    expect(sourceIds(first.body)).toContain('lamp');

    const second = await ask(FOLLOW_UP);
    expect(second.status).toBe(200);
    expect(second.body.answer).toBe('It costs 49 euros.');
    expect(sourceIds(second.body)).toContain('lamp-price');
    expect(sourceIds(second.body)).not.toContain('clock');

    const requests = await fakeRequests(tag);
    expect(requests).toHaveLength(3);
    // The rewrite: the second request, short, at temperature 0, no tools, the conversation as data.
    const [answer1, rewrite, answer2] = requests;
    expect(answer1.body.tools).toBeDefined();
    expect(rewrite.body).toMatchObject({
      max_completion_tokens: LIMITS.questionInContext.rewriteMaxTokens,
      temperature: 0,
    });
    expect(rewrite.body.tools).toBeUndefined();
    expect(rewrite.body.stream).toBeUndefined();
    const data = rewrite.body.messages[1].content as string;
    expect(data).toContain('"from":"visitor","text":"Tell me about the Lumo desk lamp');
    expect(data).toContain('"from":"assistant","text":"The Lumo desk lamp has three brightness levels."');
    expect(data).toContain(`"from":"visitor","text":"${FOLLOW_UP}"`);
    // The answer's model read the price passage.
    expect(answer2.body.messages[0].content).toContain(PRICE);

    // The run's usage holds both calls; its credits are charged on them; it kept what it read.
    const runs = await runsOf(session);
    expect(runs).toHaveLength(2);
    expect(runs[0].searched_with).toBeNull();
    expect(runs[0].prompt_tokens).toBe(answer1.usage!.prompt_tokens);
    const run = runs[1];
    expect(run.searched_with).toBe('How much does the Lumo desk lamp cost?');
    expect(run.prompt_tokens).toBe(rewrite.usage!.prompt_tokens + answer2.usage!.prompt_tokens);
    expect(run.completion_tokens).toBe(rewrite.usage!.completion_tokens + answer2.usage!.completion_tokens);
    expect(run.credits).toBe(creditsFor(run.prompt_tokens, run.completion_tokens, 1));
    expect(run.passages).toContainEqual(expect.objectContaining({ source_id: 'lamp-price', text: PRICE }));

    // A message that stands alone asks the model once.
    const third = await ask('How much does the Orbit wall clock cost?');
    expect(third.status).toBe(200);
    expect(await fakeRequests(tag)).toHaveLength(4);
    expect((await runsOf(session))[2].searched_with).toBeNull();

    // The dashboard lists what each answer read, newest first.
    const read = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${session}/passages`, {
      headers: await ownerSession(bot),
    });
    expect(read.status).toBe(200);
    expect(read.body.answers.map((a: { question: string }) => a.question)).toEqual([
      'How much does the Orbit wall clock cost?',
      FOLLOW_UP,
      `${FIRST} ${marker}`,
    ]);
    expect(read.body.answers[1]).toMatchObject({
      searched_with: 'How much does the Lumo desk lamp cost?',
      passages: expect.arrayContaining([expect.objectContaining({ source_id: 'lamp-price', text: PRICE })]),
    });
    expect(read.body.answers[1].message_id).toMatch(/^msg_/);
  });

  it('an agent without knowledge asks the model no standalone question: there is nothing to search', async () => {
    const bot = await newBot();
    const key = bot.keys.secret_key;
    const { marker, tag } = await scriptFakeModel(
      [{ text: 'Hello! What can I do for you?' }, { text: 'I do not know the price, sorry.' }],
      'no-knowledge',
    );
    const session = randomUUID();
    const ask = (message: string) => http('/v1/api/chat', { key, body: { session_id: session, message } });
    expect((await ask(`${FIRST} ${marker}`)).status).toBe(200);
    const second = await ask(FOLLOW_UP);
    expect(second.body.answer).toBe('I do not know the price, sorry.');
    // One call a turn: no rewrite was asked for (nor charged), and no second search recorded.
    expect(await fakeRequests(tag)).toHaveLength(2);
    const runs = await runsOf(session);
    expect(runs[1].searched_with).toBeNull();
    expect(runs[1].credits).toBe(creditsFor(runs[1].prompt_tokens, runs[1].completion_tokens, 1));
  });

  it('a model that fails the rewrite leaves the recent messages: the turn still finds the price', async () => {
    const bot = await shop();
    const { marker, tag } = await scriptFakeModel(
      [{ text: 'The Lumo desk lamp has three brightness levels.' }, { status: 500 }, { text: 'It costs 49 euros.' }],
      'in-context-fail',
    );
    const session = randomUUID();
    const ask = (message: string) =>
      http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message } });
    expect((await ask(`${FIRST} ${marker}`)).status).toBe(200);
    const second = await ask(FOLLOW_UP);
    expect(second.status).toBe(200);
    expect(sourceIds(second.body)).toContain('lamp-price');
    expect(await fakeRequests(tag)).toHaveLength(3);
    const run = (await runsOf(session))[1];
    expect(run.searched_with).toBe(`${FIRST} ${marker}\n${FOLLOW_UP}`);
  });
});

describe('a follow-up, without a model (extractive)', () => {
  let own: OwnPlatform;
  beforeAll(async () => {
    own = await startOwnPlatform('in-context', { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined });
  }, 120_000);
  afterAll(async () => own?.stop());

  it('is searched with the visitor’s recent messages: the answer quotes the price', async () => {
    const bot = await shop();
    const key = bot.keys.secret_key;
    const alone = await http('/v1/api/knowledge/search', { key, body: { query: FOLLOW_UP }, baseUrl: own.baseUrl });
    expect(alone.body.passages).toEqual([]);

    const session = randomUUID();
    const ask = (message: string) =>
      http('/v1/api/chat', { key, body: { session_id: session, message }, baseUrl: own.baseUrl });
    const first = await ask(FIRST);
    expect(first.body.answer).toContain('three brightness levels');

    const second = await ask(FOLLOW_UP);
    expect(second.status).toBe(200);
    expect(second.body.answer).toContain('49 euros');
    expect(sourceIds(second.body)).toContain('lamp-price');
    expect(sourceIds(second.body)).not.toContain('clock-price');

    const runs = await runsOf(session);
    expect(runs[1]).toMatchObject({
      searched_with: `${FIRST}\n${FOLLOW_UP}`,
      prompt_tokens: 0,
      completion_tokens: 0,
      credits: 1,
    });
    expect(runs[1].passages?.map((p) => p.source_id)).toContain('lamp-price');
  });
});
