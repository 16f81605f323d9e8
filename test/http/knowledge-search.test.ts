import { beforeAll, describe, expect, it } from '@jest/globals';
import { deleteSource, upsertSource } from '../../lib/knowledge/store';
import { http, newBot, ownerSession, testDb } from '../support/helpers';

/**
 * The dashboard's knowledge list (`GET /v1/dashboard/bots/{id}/knowledge`): newest first unless `order=oldest`, `q`
 * keeping the sources whose title or id contains it in any case, keyset pages that follow both; the public
 * `GET /v1/api/knowledge` keeps its oldest-first order and its cursors.
 */

type Bot = Awaited<ReturnType<typeof newBot>>;
type Summary = { source_id: string; title: string };

let bot: Bot;
let session: Record<string, string>;

/** Written one at a time through the library (the API write is rate limited), so the creation order is this one. */
const SEEDED: { id: string; title: string }[] = [
  { id: 'faq-shipping', title: 'Shipping times' },
  { id: 'faq-RETURNS', title: 'Returns and refunds' },
  { id: 'price-list', title: 'Prices: 100% cotton shirts' },
  { id: 'opening_hours', title: 'When the shop is open' },
  { id: 'faq-gift-cards', title: 'Gift Cards' },
  { id: 'discount', title: '50 percent off in March' },
  { id: 'openingXhours', title: 'Old hours page' },
  { id: 'faq-warranty', title: 'Warranty for two years' },
];

const dashboardList = (query = '') => http(`/v1/dashboard/bots/${bot.bot_id}/knowledge${query}`, { headers: session });

const ids = (body: { sources: Summary[] }) => body.sources.map((s) => s.source_id);

/** Every page of the dashboard list under these parameters, `limit` a page; fails on a page that is not 200. */
async function allPages(params: Record<string, string>, limit: number): Promise<{ ids: string[]; sizes: number[] }> {
  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor = '';
  for (let n = 0; n < 50; n += 1) {
    const query = new URLSearchParams({ ...params, limit: String(limit), ...(cursor ? { cursor } : {}) });
    const page = await dashboardList(`?${query}`);
    expect([page.status, page.body]).toEqual([200, expect.anything()]);
    seen.push(...ids(page.body));
    sizes.push(page.body.sources.length);
    cursor = page.body.next_cursor;
    if (!cursor) return { ids: seen, sizes };
  }
  throw new Error('more than 50 pages');
}

beforeAll(async () => {
  bot = await newBot();
  session = await ownerSession(bot);
  for (const { id, title } of SEEDED) {
    await upsertSource(testDb(), { botId: bot.bot_id, sourceId: id, title, text: `About ${title}.` });
  }
});

const oldestFirst = SEEDED.map((s) => s.id);
const newestFirst = [...oldestFirst].reverse();

describe('GET /v1/dashboard/bots/{id}/knowledge: order', () => {
  it('lists newest first by default, oldest first with order=oldest', async () => {
    expect(ids((await dashboardList()).body)).toEqual(newestFirst);
    expect(ids((await dashboardList('?order=newest')).body)).toEqual(newestFirst);
    expect(ids((await dashboardList('?order=oldest')).body)).toEqual(oldestFirst);
  });

  it('an unknown order is 400 bad_request in the error shape', async () => {
    const res = await dashboardList('?order=sideways');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringContaining('order'), code: 'bad_request' });
  });

  it('pages in either order with no source twice and none left out; an update keeps its place', async () => {
    await upsertSource(testDb(), {
      botId: bot.bot_id,
      sourceId: 'faq-RETURNS',
      title: 'Returns and refunds',
      text: 'New.',
    });
    for (const limit of [1, 3, 8]) {
      expect((await allPages({}, limit)).ids).toEqual(newestFirst);
      expect((await allPages({ order: 'oldest' }, limit)).ids).toEqual(oldestFirst);
    }
    expect((await allPages({}, 3)).sizes).toEqual([3, 3, 2]);
  });

  it('a cursor is refused in the other order: 400 bad_request, not a page of the wrong sources', async () => {
    const newest = await dashboardList('?limit=2');
    const oldest = await dashboardList('?limit=2&order=oldest');
    for (const [cursor, order] of [
      [newest.body.next_cursor, 'oldest'],
      [oldest.body.next_cursor, 'newest'],
    ]) {
      const res = await dashboardList(`?limit=2&order=${order}&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.stringContaining('cursor'), code: 'bad_request' });
    }
  });
});

describe('GET /v1/dashboard/bots/{id}/knowledge: q', () => {
  it('matches the title or the source_id, in any case, trimmed', async () => {
    // "faq" is in four ids and no title; "CARDS" is in a title as "Cards" and in an id as "cards".
    expect(ids((await dashboardList('?q=FAQ')).body)).toEqual([
      'faq-warranty',
      'faq-gift-cards',
      'faq-RETURNS',
      'faq-shipping',
    ]);
    expect(ids((await dashboardList('?q=returns')).body)).toEqual(['faq-RETURNS']);
    expect(ids((await dashboardList('?q=shipping%20TIMES')).body)).toEqual(['faq-shipping']);
    expect(ids((await dashboardList(`?q=${encodeURIComponent('  gift cards  ')}`)).body)).toEqual(['faq-gift-cards']);
    expect(ids((await dashboardList('?q=cards&order=oldest')).body)).toEqual(['faq-gift-cards']);
    expect((await dashboardList('?q=nothing-like-this')).body).toEqual({ sources: [], next_cursor: '' });
    // Blank is no filter.
    expect(ids((await dashboardList('?q=%20%20')).body)).toEqual(newestFirst);
  });

  it('takes % and _ literally', async () => {
    // "%" as a wildcard would match every source; "_" would match "openingXhours" too.
    expect(ids((await dashboardList(`?q=${encodeURIComponent('100%')}`)).body)).toEqual(['price-list']);
    expect(ids((await dashboardList(`?q=${encodeURIComponent('%')}`)).body)).toEqual(['price-list']);
    expect(ids((await dashboardList(`?q=${encodeURIComponent('opening_hours')}`)).body)).toEqual(['opening_hours']);
    expect(ids((await dashboardList(`?q=${encodeURIComponent('_')}`)).body)).toEqual(['opening_hours']);
    expect(ids((await dashboardList(`?q=${encodeURIComponent('\\')}`)).body)).toEqual([]);
  });

  it('pages through the matches in either order, no duplicates and no gaps', async () => {
    const faq = ['faq-shipping', 'faq-RETURNS', 'faq-gift-cards', 'faq-warranty'];
    for (const limit of [1, 3]) {
      expect((await allPages({ q: 'faq' }, limit)).ids).toEqual([...faq].reverse());
      expect((await allPages({ q: 'Faq', order: 'oldest' }, limit)).ids).toEqual(faq);
    }
    expect((await allPages({ q: 'faq' }, 3)).sizes).toEqual([3, 1]);
    // A matching source added between two pages comes in the newest-first list's first page, not in a later one.
    const first = await dashboardList('?q=faq&limit=2');
    await upsertSource(testDb(), { botId: bot.bot_id, sourceId: 'faq-late', title: 'Late', text: 'Late.' });
    try {
      const second = await dashboardList(`?q=faq&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
      expect([...ids(first.body), ...ids(second.body)]).toEqual([
        'faq-warranty',
        'faq-gift-cards',
        'faq-RETURNS',
        'faq-shipping',
      ]);
    } finally {
      await deleteSource(testDb(), bot.bot_id, 'faq-late');
    }
  });

  it('a q over 200 characters (after trimming) is 400 bad_request in the error shape', async () => {
    const ok = await dashboardList(`?q=${'a'.repeat(200)}`);
    expect([ok.status, ok.body]).toEqual([200, { sources: [], next_cursor: '' }]);
    expect((await dashboardList(`?q=${encodeURIComponent(` ${'a'.repeat(200)} `)}`)).status).toBe(200);
    const res = await dashboardList(`?q=${'a'.repeat(201)}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringContaining('q'), code: 'bad_request' });
    expect(res.body.error).toContain('at most 200 characters');
  });

  it('is in the contract document as optional query parameters of the dashboard list only', async () => {
    const doc = (await http('/v1/openapi.json')).body;
    const params = doc.paths['/v1/dashboard/bots/{id}/knowledge'].get.parameters;
    expect(params).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'q', in: 'query', required: false }),
        expect.objectContaining({ name: 'order', in: 'query', required: false }),
      ]),
    );
    const order = params.find((p: { name: string }) => p.name === 'order');
    expect(order.schema).toEqual(expect.objectContaining({ enum: ['newest', 'oldest'], default: 'newest' }));
    const q = params.find((p: { name: string }) => p.name === 'q');
    expect(q.schema).toEqual(expect.objectContaining({ maxLength: 200 }));
    const publicNames = doc.paths['/v1/api/knowledge'].get.parameters.map((p: { name: string }) => p.name);
    expect(publicNames).not.toContain('q');
    expect(publicNames).not.toContain('order');
  });
});

describe('GET /v1/api/knowledge is unchanged', () => {
  it('lists oldest first, ignores q and order, and pages with the cursors it always had', async () => {
    const list = (query: string) => http(`/v1/api/knowledge${query}`, { key: bot.keys.secret_key });
    expect(ids((await list('')).body)).toEqual(oldestFirst);
    expect(ids((await list('?order=newest&q=faq')).body)).toEqual(oldestFirst);
    const first = await list('?limit=3');
    expect(ids(first.body)).toEqual(oldestFirst.slice(0, 3));
    // The cursor is the one it always was: the last row's position, no order in it.
    const decoded = JSON.parse(Buffer.from(first.body.next_cursor, 'base64url').toString('utf8'));
    expect(Object.keys(decoded).sort()).toEqual(['seq', 'v']);
    const second = await list(`?limit=3&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(ids(second.body)).toEqual(oldestFirst.slice(3, 6));
    // A dashboard cursor of the oldest-first list pages it the same way; a newest-first one is refused.
    const dashboardOldest = await dashboardList('?limit=3&order=oldest');
    expect(dashboardOldest.body.next_cursor).toBe(first.body.next_cursor);
    const dashboardNewest = await dashboardList('?limit=3');
    const refused = await list(`?cursor=${encodeURIComponent(dashboardNewest.body.next_cursor)}`);
    expect([refused.status, refused.body.code]).toEqual([400, 'bad_request']);
  });
});
