import { beforeAll, describe, expect, it } from '@jest/globals';
import { upsertSource } from '../../lib/knowledge/store';
import { LIMITS } from '../../lib/limits';
import { http, inOneRateWindow, newBot, ownerSession, testDb } from '../support/helpers';

/**
 * What a question retrieves (docs/decisions/153-see-what-the-agent-reads.md): `POST /v1/api/knowledge/search` (secret key,
 * reads group) and the dashboard's `POST /v1/dashboard/bots/{id}/knowledge/search` answer the ranked passages with
 * their source, heading path, page and score; the dashboard's list searches the sources' text and filters by kind.
 */

type Bot = Awaited<ReturnType<typeof newBot>>;
type Found = {
  source_id: string;
  title: string;
  heading_path: string[];
  page: number | null;
  text: string;
  score: number;
  url?: string;
};

let bot: Bot;
let other: Bot;

const search = (body: unknown, key = bot.keys.secret_key) => http('/v1/api/knowledge/search', { key, body });

beforeAll(async () => {
  [bot, other] = await Promise.all([newBot(), newBot()]);
  const db = testDb();
  await upsertSource(db, {
    botId: bot.bot_id,
    sourceId: 'lamp-manual',
    title: 'Lumo desk lamp manual',
    text: [
      '# Lumo desk lamp manual',
      '## Installation',
      'Screw the clamp to the desk edge and plug the adapter into a socket.',
      '## Brightness',
      'Touch the dimmer ring to pick one of three brightness levels.',
    ].join('\n\n'),
  });
  await upsertSource(db, {
    botId: bot.bot_id,
    sourceId: 'lamp-price',
    title: 'Lumo desk lamp price',
    text: 'The Lumo desk lamp costs 49 euros, the Orbit wall clock 35 euros.',
  });
  await upsertSource(db, {
    botId: bot.bot_id,
    sourceId: 'https://shop.test/returns',
    title: 'Returns',
    text: 'Return any lamp within 30 days for a full refund.',
    origin: 'scan',
    url: 'https://shop.test/returns',
  });
  // 25 sources that each mention the lamp: more than the largest `limit`.
  for (let i = 1; i <= 25; i++) {
    await upsertSource(db, {
      botId: bot.bot_id,
      sourceId: `note-${i}`,
      title: `Note ${i}`,
      text: `Customer note ${i}: the lamp arrived.`,
    });
  }
  // Another workspace's bot knows about the same lamp: never in this bot's answers.
  await upsertSource(db, {
    botId: other.bot_id,
    sourceId: 'lamp-price',
    title: 'Other shop prices',
    text: 'The Lumo desk lamp costs 12 euros at the other shop.',
  });
});

describe('POST /v1/api/knowledge/search', () => {
  it('answers the passages ranked, each with its source, heading path, page and score', async () => {
    const res = await search({ query: 'How much does the Lumo desk lamp cost?' });
    expect(res.status).toBe(200);
    const passages = res.body.passages as Found[];
    expect(passages).toHaveLength(LIMITS.knowledgeSearch.default);
    expect(passages[0]).toEqual({
      source_id: 'lamp-price',
      title: 'Lumo desk lamp price',
      heading_path: [],
      page: null,
      text: 'The Lumo desk lamp costs 49 euros, the Orbit wall clock 35 euros.',
      score: expect.any(Number),
    });
    const scores = passages.map((p) => p.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const manual = (await search({ query: 'dimmer ring brightness', limit: 1 })).body.passages as Found[];
    expect(manual).toEqual([
      expect.objectContaining({
        source_id: 'lamp-manual',
        title: 'Lumo desk lamp manual',
        heading_path: ['Lumo desk lamp manual', 'Brightness'],
        page: null,
        text: expect.stringContaining('dimmer ring'),
      }),
    ]);

    // A scanned page says where it was read.
    const page = (await search({ query: 'refund', limit: 1 })).body.passages as Found[];
    expect(page[0]).toMatchObject({ source_id: 'https://shop.test/returns', url: 'https://shop.test/returns' });
  });

  it('never answers another bot’s passages, and an empty list when nothing matches', async () => {
    const mine = (await search({ query: 'Lumo lamp costs euros', limit: 20 })).body.passages as Found[];
    expect(mine.some((p) => p.text.includes('12 euros'))).toBe(false);
    const theirs = (await search({ query: 'Lumo lamp costs euros', limit: 20 }, other.keys.secret_key)).body
      .passages as Found[];
    expect(theirs.map((p) => p.text)).toEqual(['The Lumo desk lamp costs 12 euros at the other shop.']);
    expect(await search({ query: 'quantum chromodynamics' })).toMatchObject({ status: 200, body: { passages: [] } });
  });

  it(`takes limit ${LIMITS.knowledgeSearch.min}–${LIMITS.knowledgeSearch.max}, default ${LIMITS.knowledgeSearch.default}`, async () => {
    const count = async (limit: number) => {
      const res = await search({ query: 'lamp', limit });
      expect(res.status).toBe(200);
      return res.body.passages.length as number;
    };
    expect(await count(LIMITS.knowledgeSearch.min)).toBe(1);
    expect(await count(LIMITS.knowledgeSearch.max)).toBe(20);
    for (const limit of [0, LIMITS.knowledgeSearch.max + 1, -1, 2.5, '5', null]) {
      const res = await search({ query: 'lamp', limit });
      expect([limit, res.status, res.body.code, res.body.error]).toEqual([
        limit,
        400,
        'bad_request',
        expect.stringContaining('limit'),
      ]);
    }
  });

  it('refuses a missing, blank or too long query with 400 in the error shape', async () => {
    const max = LIMITS.knowledgeSearch.queryChars;
    expect((await search({ query: `lamp ${'x'.repeat(max - 5)}` })).status).toBe(200);
    for (const body of [{}, { query: '' }, { query: '  \n ' }, { query: 42 }, { query: 'x'.repeat(max + 1) }]) {
      const res = await search(body);
      expect([res.status, res.body]).toEqual([400, { error: expect.stringContaining('query'), code: 'bad_request' }]);
    }
    const notJson = await http('/v1/api/knowledge/search', {
      key: bot.keys.secret_key,
      rawBody: 'query=lamp',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
  });

  it('takes the secret key only, and counts in the reads group', async () => {
    expect((await http('/v1/api/knowledge/search', { body: { query: 'lamp' } })).status).toBe(401);
    const publicKey = await search({ query: 'lamp' }, bot.keys.public_key);
    expect([401, 403]).toContain(publicKey.status);

    await inOneRateWindow();
    const fresh = await newBot();
    const list = await http('/v1/api/knowledge', { key: fresh.keys.secret_key });
    const found = await search({ query: 'lamp' }, fresh.keys.secret_key);
    expect(found.headers.get('ratelimit-limit')).toBe(String(LIMITS.rateGroups.reads));
    expect(Number(found.headers.get('ratelimit-remaining'))).toBe(Number(list.headers.get('ratelimit-remaining')) - 1);
    // The dialogue budget is untouched.
    const write = await http('/v1/api/knowledge', { key: fresh.keys.secret_key, body: { text: 'A lamp note.' } });
    expect(write.headers.get('ratelimit-limit')).toBe(String(LIMITS.rateGroups.dialogue));
    expect(write.headers.get('ratelimit-remaining')).toBe(String(LIMITS.rateGroups.dialogue - 1));
  });

  it('is described in the OpenAPI document, with the dashboard’s operations', async () => {
    const doc = (await http('/v1/openapi.json')).body;
    const op = doc.paths['/v1/api/knowledge/search'].post;
    expect(op.operationId).toBe('searchKnowledge');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    const request = JSON.stringify(doc.components.schemas.KnowledgeSearchRequest);
    expect(request).toContain(`"maximum":${LIMITS.knowledgeSearch.max}`);
    expect(request).toContain(`"default":${LIMITS.knowledgeSearch.default}`);
    expect(doc.paths['/v1/dashboard/bots/{id}/knowledge/search'].post.operationId).toBe('dashboardSearchKnowledge');
    expect(doc.paths['/v1/dashboard/bots/{id}/threads/{sid}/passages'].get.operationId).toBe('dashboardPassagesRead');
    const list = doc.paths['/v1/dashboard/bots/{id}/knowledge'].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(expect.arrayContaining(['q', 'kind']));
  });
});

describe('the dashboard: testing a question, and the sources list', () => {
  it('answers the same passages to a signed-in person of the bot’s workspace, 404 for another bot', async () => {
    const session = await ownerSession(bot);
    const path = `/v1/dashboard/bots/${bot.bot_id}/knowledge/search`;
    const res = await http(path, { headers: session, body: { query: 'How much does the Lumo desk lamp cost?' } });
    expect(res.status).toBe(200);
    const api = await search({ query: 'How much does the Lumo desk lamp cost?' });
    expect(res.body).toEqual(api.body);
    expect((await http(path, { body: { query: 'lamp' } })).status).toBe(401);
    const stranger = await ownerSession(other);
    expect((await http(path, { headers: stranger, body: { query: 'lamp' } })).status).toBe(404);
    const bad = await http(path, { headers: session, body: { query: 'lamp', limit: 21 } });
    expect([bad.status, bad.body.code]).toEqual([400, 'bad_request']);
  });

  it('lists the sources whose text holds the words, as well as by title or id, and by kind', async () => {
    const session = await ownerSession(bot);
    const list = async (query: string) => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/knowledge?limit=50&${query}`, { headers: session });
      expect(res.status).toBe(200);
      return (res.body.sources as { source_id: string; kind: string }[]).map((s) => s.source_id).sort();
    };
    // Words of the text (any form: "screwed clamps"), not of the title or id.
    expect(await list(`q=${encodeURIComponent('screwed clamps')}`)).toEqual(['lamp-manual']);
    expect(await list(`q=${encodeURIComponent('euros')}`)).toEqual(['lamp-price']);
    // Every word must be there; a title still matches as it did.
    expect(await list(`q=${encodeURIComponent('clamp euros')}`)).toEqual([]);
    expect(await list(`q=${encodeURIComponent('PRICE')}`)).toEqual(['lamp-price']);
    // By kind: the scanned page, the texts, no file.
    expect(await list('kind=page')).toEqual(['https://shop.test/returns']);
    expect((await list('kind=text')).length).toBe(27);
    expect(await list('kind=file')).toEqual([]);
    expect(await list(`kind=page&q=${encodeURIComponent('refund')}`)).toEqual(['https://shop.test/returns']);
    expect(await list(`kind=text&q=${encodeURIComponent('refund')}`)).toEqual([]);
    const bad = await http(`/v1/dashboard/bots/${bot.bot_id}/knowledge?kind=pdf`, { headers: session });
    expect([bad.status, bad.body.code]).toEqual([400, 'bad_request']);
  });
});
