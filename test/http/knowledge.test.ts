import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { upsertSource } from '../../lib/knowledge/store';
import { http, inOneRateWindow, newBot, testDb, type HttpResult } from '../support/helpers';

const MiB = 1024 * 1024;

type Bot = Awaited<ReturnType<typeof newBot>>;

function write(bot: Bot, body: unknown, opts: { path?: string; headers?: Record<string, string> } = {}) {
  return http(opts.path ?? '/v1/api/knowledge', { key: bot.keys.secret_key, body, headers: opts.headers });
}

const list = (bot: Bot, query = '') => http(`/v1/api/knowledge${query}`, { key: bot.keys.secret_key });
const get = (bot: Bot, id: string) => http(`/v1/api/knowledge/${encodeURIComponent(id)}`, { key: bot.keys.secret_key });
const del = (bot: Bot, id: string) =>
  http(`/v1/api/knowledge/${encodeURIComponent(id)}`, { key: bot.keys.secret_key, method: 'DELETE' });

async function fragmentRows(botId: string, sourceId: string) {
  const res = await testDb().query<{ ordinal: number; text: string }>(
    `SELECT ordinal, text FROM knowledge_fragments WHERE bot_id = $1 AND source_id = $2 ORDER BY ordinal`,
    [botId, sourceId],
  );
  return res.rows;
}

async function version(botId: string): Promise<number> {
  return (await testDb().query(`SELECT knowledge_version FROM bots WHERE id = $1`, [botId])).rows[0].knowledge_version;
}

/** Runs `count` calls with at most `width` in flight. */
async function inBatches<T>(count: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, j) => fn(i + j)))));
  }
  return out;
}

/** A JSON knowledge write of exactly `size` bytes: prose, so it indexes like real text. */
function bodyOfSize(size: number): string {
  const head = '{"source_id":"big","text":"';
  const tail = '"}';
  const prose = 'The quick brown fox jumps over the lazy dog near the river bank. ';
  const n = size - head.length - tail.length;
  return head + prose.repeat(Math.ceil(n / prose.length)).slice(0, n) + tail;
}

const longText = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `Paragraph ${i} explains opening hours, refunds and delivery in some detail.`,
  ).join(' ');

describe('knowledge sources through /v1/api/knowledge', () => {
  it('writes, lists, reads in full and deletes a source', async () => {
    const bot = await newBot();
    const v0 = await version(bot.bot_id);
    const created = await write(bot, { source_id: 'faq', title: 'FAQ', text: 'We open at 9 and close at 18.' });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ status: 'indexed', source_id: 'faq' });
    expect(await version(bot.bot_id)).toBe(v0 + 1);

    const listed = await list(bot);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      sources: [
        {
          source_id: 'faq',
          title: 'FAQ',
          fragments: 1,
          origin: 'api',
          kind: 'text',
          status: 'indexed',
          reason: null,
          file: null,
          url: null,
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
      ],
      next_cursor: '',
    });
    expect(Math.abs(listed.body.sources[0].created_at - Date.now())).toBeLessThan(60_000);

    const full = await get(bot, 'faq');
    expect(full.status).toBe(200);
    expect(full.body).toEqual({ ...listed.body.sources[0], text: 'We open at 9 and close at 18.' });

    const deleted = await del(bot, 'faq');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'deleted', source_id: 'faq' });
    expect(await version(bot.bot_id)).toBe(v0 + 2);
    expect(await fragmentRows(bot.bot_id, 'faq')).toEqual([]);

    expect((await get(bot, 'faq')).body.code).toBe('not_found');
    const again = await del(bot, 'faq');
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect(await version(bot.bot_id)).toBe(v0 + 2); // nothing deleted, no cache reset
    expect((await list(bot)).body).toEqual({ sources: [], next_cursor: '' });
  });

  it('without source_id every write creates a new source with a generated src_ id', async () => {
    const bot = await newBot();
    const a = await write(bot, { text: 'Same text.' });
    const b = await write(bot, { text: 'Same text.' });
    expect(a.status).toBe(202);
    expect(a.body.source_id).toMatch(/^src_[A-Za-z0-9]{20}$/);
    expect(b.body.source_id).toMatch(/^src_/);
    expect(b.body.source_id).not.toBe(a.body.source_id);
    const ids = (await list(bot)).body.sources.map((s: { source_id: string }) => s.source_id);
    expect(ids).toEqual([a.body.source_id, b.body.source_id]);
  });

  it('the same source_id replaces the source: new text and fragment count, no duplicate fragments', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'policy', title: 'Policy v1', text: longText(60) });
    const before = await fragmentRows(bot.bot_id, 'policy');
    expect(before.length).toBeGreaterThan(3);
    const first = (await get(bot, 'policy')).body;
    expect(first.fragments).toBe(before.length);

    await write(bot, { source_id: 'policy', title: 'Policy v2', text: 'Refunds within 30 days.' });
    const after = await fragmentRows(bot.bot_id, 'policy');
    expect(after).toEqual([{ ordinal: 0, text: 'Refunds within 30 days.' }]);
    const listed = (await list(bot)).body.sources;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ source_id: 'policy', title: 'Policy v2', fragments: 1 });
    expect(listed[0].created_at).toBe(first.created_at);
    expect(listed[0].updated_at).toBeGreaterThanOrEqual(first.updated_at);
    expect((await get(bot, 'policy')).body.text).toBe('Refunds within 30 days.');

    // Writing the same text again keeps one copy of every fragment, and still resets the answer cache.
    const v = await version(bot.bot_id);
    await write(bot, { source_id: 'policy', title: 'Policy v2', text: 'Refunds within 30 days.' });
    expect(await fragmentRows(bot.bot_id, 'policy')).toEqual(after);
    expect(await version(bot.bot_id)).toBe(v + 1);
  });

  it('a title is optional: the first line of the text is listed instead', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'hours', text: 'Opening hours\nMonday to Friday, 9 to 18.' });
    expect((await get(bot, 'hours')).body.title).toBe('Opening hours');
  });

  it('a source_id may be any string up to 200 characters, a URL included (percent-encoded in the path)', async () => {
    const bot = await newBot();
    const url = 'https://example.com/help/a b?x=1&y=ü#top';
    expect((await write(bot, { source_id: url, text: 'Help page.' })).body.source_id).toBe(url);
    const got = await get(bot, url);
    expect(got.status).toBe(200);
    expect(got.body.source_id).toBe(url);
    const longest = 'i'.repeat(200);
    expect((await write(bot, { source_id: longest, text: 'x' })).status).toBe(202);
    expect((await get(bot, longest)).status).toBe(200);
    expect((await del(bot, url)).status).toBe(200);
  });

  it.each([
    ['empty text', { text: '' }, 'text'],
    ['blank text', { text: ' \n\t ' }, 'text'],
    ['no text', { title: 'x' }, 'text'],
    ['text not a string', { text: 42 }, 'text'],
    ['empty source_id', { source_id: '', text: 'x' }, 'source_id'],
    ['source_id of 201 characters', { source_id: 'i'.repeat(201), text: 'x' }, 'source_id'],
    ['source_id with a control character', { source_id: 'a\u0000b', text: 'x' }, 'source_id'],
  ])('%s is 400 bad_request naming the field', async (_label, body, field) => {
    const bot = await newBot();
    const res = await write(bot, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.error).toContain(field);
    expect((await list(bot)).body.sources).toEqual([]);
  });

  it('accepts a body of exactly 5 MiB and refuses one byte more with 413 payload_too_large', async () => {
    const bot = await newBot();
    const headers = { 'Content-Type': 'application/json' };
    const exact = bodyOfSize(5 * MiB);
    expect(Buffer.byteLength(exact)).toBe(5 * MiB);
    const ok = await http('/v1/api/knowledge', { key: bot.keys.secret_key, rawBody: exact, headers });
    expect(ok.status).toBe(202);
    const stored = (await get(bot, 'big')).body;
    expect(stored.text).toHaveLength(5 * MiB - '{"source_id":"big","text":""}'.length);
    expect(stored.fragments).toBeGreaterThan(4000);

    const over = await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      rawBody: bodyOfSize(5 * MiB + 1),
      headers,
    });
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('payload_too_large');
  });

  it('checks the key: none is 401 missing_key, a pk_ key is 403 wrong_key_type', async () => {
    const bot = await newBot();
    expect((await http('/v1/api/knowledge', { body: { text: 'x' } })).body.code).toBe('missing_key');
    const pk = await http('/v1/api/knowledge', { key: bot.keys.public_key, body: { text: 'x' } });
    expect(pk.status).toBe(403);
    expect(pk.body.code).toBe('wrong_key_type');
  });
});

describe('GET /v1/api/knowledge pagination', () => {
  async function seed(bot: Bot, n: number): Promise<string[]> {
    const ids = Array.from({ length: n }, (_, i) => `s${String(i).padStart(3, '0')}`);
    // Seeded through the library (the API write is rate limited to 60 a minute), one at a time for a known order.
    for (const id of ids) await upsertSource(testDb(), { botId: bot.bot_id, sourceId: id, text: `Source ${id}.` });
    return ids;
  }

  it('limit 0 is 400; 500 is cut to 200; the default is 50', async () => {
    const bot = await newBot();
    const ids = await seed(bot, 205);
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const res = await list(bot, `?limit=${bad}`);
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, 'bad_request']);
      expect(res.body.error).toContain('limit');
    }
    const cut = await list(bot, '?limit=500');
    expect(cut.status).toBe(200);
    expect(cut.body.sources).toHaveLength(200);
    expect(cut.body.next_cursor).not.toBe('');
    const rest = await list(bot, `?limit=500&cursor=${encodeURIComponent(cut.body.next_cursor)}`);
    expect(rest.body.sources.map((s: { source_id: string }) => s.source_id)).toEqual(ids.slice(200));
    expect(rest.body.next_cursor).toBe('');
    expect((await list(bot)).body.sources).toHaveLength(50);
    expect((await list(bot, '?limit=200')).body.sources).toHaveLength(200);
    expect((await list(bot, '?limit=1')).body.sources).toHaveLength(1);
  });

  it('pages with the opaque cursor until next_cursor is empty, each source exactly once', async () => {
    const bot = await newBot();
    for (const [n, pages] of [
      [7, [3, 3, 1]],
      [6, [3, 3]], // a full last page already says it is the last: no empty extra page
    ] as const) {
      const b = n === 7 ? bot : await newBot();
      const ids = await seed(b, n);
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor = '';
      do {
        const page: HttpResult = await list(b, `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        sizes.push(page.body.sources.length);
        seen.push(...page.body.sources.map((s: { source_id: string }) => s.source_id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(sizes).toEqual(pages);
      expect(seen).toEqual(ids);
    }
  });

  it('an update keeps the source in its place', async () => {
    const bot = await newBot();
    await seed(bot, 3);
    await write(bot, { source_id: 's000', text: 'Rewritten.' });
    expect((await list(bot)).body.sources.map((s: { source_id: string }) => s.source_id)).toEqual([
      's000',
      's001',
      's002',
    ]);
  });

  it('a cursor this API did not produce is 400 bad_request', async () => {
    const bot = await newBot();
    const res = await list(bot, '?cursor=not-a-cursor');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
  });

  it('an empty knowledge base lists as an empty array with an empty next_cursor', async () => {
    const bot = await newBot();
    expect((await list(bot)).body).toEqual({ sources: [], next_cursor: '' });
  });
});

describe('isolation between bots', () => {
  it("another bot's key gets 404 for the source and never sees it in its list", async () => {
    const a = await newBot();
    const b = await newBot();
    await write(a, { source_id: 'secret-plan', text: 'Only for bot A.' });
    expect((await get(b, 'secret-plan')).status).toBe(404);
    expect((await get(b, 'secret-plan')).body.code).toBe('not_found');
    expect((await del(b, 'secret-plan')).status).toBe(404);
    expect((await list(b)).body.sources).toEqual([]);
    expect((await get(a, 'secret-plan')).status).toBe(200); // B's delete touched nothing

    // The same source_id is B's own, separate source.
    await write(b, { source_id: 'secret-plan', text: 'Bot B text.' });
    expect((await get(a, 'secret-plan')).body.text).toBe('Only for bot A.');
    expect((await get(b, 'secret-plan')).body.text).toBe('Bot B text.');
  });
});

describe('POST /v1/admin/sources', () => {
  it('behaves like POST /v1/api/knowledge: same body, same 202, same sources', async () => {
    const bot = await newBot();
    const named = await write(
      bot,
      { source_id: 'legacy', title: 'Legacy', text: 'From an old integration.' },
      { path: '/v1/admin/sources' },
    );
    expect(named.status).toBe(202);
    expect(named.body).toEqual({ status: 'indexed', source_id: 'legacy' });
    const generated = await write(bot, { text: 'No id.' }, { path: '/v1/admin/sources' });
    expect(generated.body.source_id).toMatch(/^src_/);
    expect((await get(bot, 'legacy')).body).toMatchObject({
      title: 'Legacy',
      text: 'From an old integration.',
      origin: 'api',
    });
    expect((await write(bot, { text: '' }, { path: '/v1/admin/sources' })).status).toBe(400);
    const over = await http('/v1/admin/sources', {
      key: bot.keys.secret_key,
      rawBody: bodyOfSize(5 * MiB + 1),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(over.status).toBe(413);
    expect((await http('/v1/admin/sources', { key: bot.keys.public_key, body: { text: 'x' } })).status).toBe(403);
  });

  it('is never rate limited: 61 writes in a minute all pass, with no RateLimit headers', async () => {
    const bot = await newBot();
    await inOneRateWindow();
    const results = await inBatches(61, 8, (i) =>
      write(bot, { source_id: `a${i}`, text: `Admin write ${i}.` }, { path: '/v1/admin/sources' }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(61).fill(202));
    for (const r of results) expect(r.headers.get('ratelimit-limit')).toBeNull();
    expect((await list(bot, '?limit=200')).body.sources).toHaveLength(61);
  });
});

describe('rate limits', () => {
  it('POST /v1/api/knowledge: the 60th write in a minute passes, the 61st is 429 rate_limited', async () => {
    const bot = await newBot();
    await inOneRateWindow();
    const results = await inBatches(60, 6, (i) => write(bot, { source_id: `r${i}`, text: `Write ${i}.` }));
    expect(results.map((r) => r.status)).toEqual(Array(60).fill(202));
    expect(results.map((r) => r.headers.get('ratelimit-limit'))).toEqual(Array(60).fill('60'));
    expect(results.some((r) => r.headers.get('ratelimit-remaining') === '0')).toBe(true);
    const over = await write(bot, { source_id: 'r60', text: 'One too many.' });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect((await get(bot, 'r60')).status).toBe(404); // refused before it was written
    // DELETE is in the same exhausted group; reads have their own budget.
    expect((await del(bot, 'r0')).status).toBe(429);
    const read = await list(bot);
    expect(read.status).toBe(200);
    expect(read.headers.get('ratelimit-limit')).toBe('240');
  });
});

describe('Idempotency-Key on knowledge writes', () => {
  it('the same key and body replays the 202 with Idempotency-Replayed: true and writes nothing more', async () => {
    const bot = await newBot();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await write(bot, { text: 'Generated id, written once.' }, { headers });
    const v = await version(bot.bot_id);
    const second = await write(bot, { text: 'Generated id, written once.' }, { headers });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await list(bot)).body.sources).toHaveLength(1);
    expect(await version(bot.bot_id)).toBe(v);
  });

  it('the same key with a different body is 409 idempotency_key_reused', async () => {
    const bot = await newBot();
    const headers = { 'Idempotency-Key': randomUUID() };
    expect((await write(bot, { text: 'one' }, { headers })).status).toBe(202);
    const res = await write(bot, { text: 'two' }, { headers });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('idempotency_key_reused');
    expect((await list(bot)).body.sources).toHaveLength(1);
  });

  it('concurrent identical requests create exactly one source; the others replay or get 409 in progress', async () => {
    const bot = await newBot();
    const headers = { 'Idempotency-Key': randomUUID() };
    // A text big enough that indexing takes a moment, so the requests really overlap.
    const body = { text: longText(3000) };
    const results = await Promise.all(Array.from({ length: 6 }, () => write(bot, body, { headers })));
    const ok = results.filter((r) => r.status === 202);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(6);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(r.body.code).toBe('idempotency_in_progress');
    expect(new Set(ok.map((r) => r.body.source_id)).size).toBe(1);
    const sources = (await list(bot)).body.sources;
    expect(sources.map((s: { source_id: string }) => s.source_id)).toEqual([ok[0].body.source_id]);
  });
});

describe('the contract document', () => {
  it('describes the knowledge routes from their definitions', async () => {
    const doc = (await http('/v1/openapi.json')).body;
    const write = doc.paths['/v1/api/knowledge'].post;
    expect(write.responses['202'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/KnowledgeIndexed',
    });
    expect(write.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
    expect(write.responses['413'].description).toContain('payload_too_large');
    expect(write.responses['429'].description).toContain('rate_limited');
    expect(doc.paths['/v1/admin/sources'].post.responses['429']).toBeUndefined();
    expect(doc.paths['/v1/api/knowledge'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'limit', in: 'query', required: false })]),
    );
    expect(doc.paths['/v1/api/knowledge/{id}'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/KnowledgeSource',
    });
    expect(doc.paths['/v1/api/knowledge/{id}'].delete.responses['404'].description).toContain('not_found');
    expect(doc.components.schemas.KnowledgeWriteRequest.required).toEqual(['text']);
  });
});
