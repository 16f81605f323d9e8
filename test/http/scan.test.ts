import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BootstrapResult } from '../../lib/accounts/service';
import { retrievePassages } from '../../lib/knowledge/retrieve';
import { scanScheduleId } from '../../lib/scans/service';
import { siteScanWorkflowId } from '../../workflows/contracts/site-scan';
import { siteScanWorkflow } from '../../workflows/site-scan';
import { gzipSync } from 'node:zlib';
import {
  FAKE_SITE_FACTS,
  MASCOT_FACT,
  RUSSIAN_FACT,
  SITEMAP_ONLY_FACTS,
  pageFact,
  sitemapIndexXml,
  startFakeSite,
  urlsetXml,
  type FakeSite,
} from '../support/fake-site';
import { http as api, newBot, ownerSession, testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

const DAY_MS = 86_400_000;

const scrape = (bot: BootstrapResult, body: unknown) => api('/v1/admin/scrape', { key: bot.keys.secret_key, body });
const sessions = new Map<string, Record<string, string>>();
const dashboard = async (bot: BootstrapResult) => {
  if (!sessions.has(bot.bot_id)) sessions.set(bot.bot_id, await ownerSession(bot));
  return api(`/v1/dashboard/bots/${bot.bot_id}/scans`, { headers: sessions.get(bot.bot_id) });
};

async function sources(bot: BootstrapResult) {
  const res = await api('/v1/api/knowledge?limit=200', { key: bot.keys.secret_key });
  expect(res.status).toBe(200);
  return res.body.sources as { source_id: string; url: string | null; origin: string; fragments: number }[];
}

async function fragmentCount(botId: string): Promise<number> {
  const res = await testDb().query(`SELECT count(*)::int AS n FROM knowledge_fragments WHERE bot_id = $1`, [botId]);
  return res.rows[0].n;
}

/**
 * Polls the dashboard until no scan of the bot runs (workflow closed, every row finished) and `until` holds.
 * The workflow closing matters, not only the row: a request in between would still get 409.
 */
async function settled(bot: BootstrapResult, until: (scans: any[]) => boolean = () => true, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await dashboard(bot);
    expect(res.status).toBe(200);
    const { running, scans } = res.body;
    if (!running && scans.every((s: any) => s.status !== 'scanning') && until(scans)) return scans as any[];
    if (Date.now() > deadline) throw new Error(`scan of ${bot.bot_id} not settled: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** An address nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/`;
}

/** A tiny site whose pages the test changes between scans; robots.txt is 404 (everything allowed). */
async function mutableSite(pages: Record<string, { status?: number; body: string }>) {
  const server = http.createServer((req, res) => {
    const page = pages[req.url ?? '/'];
    if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(page.status ?? 200, { 'content-type': 'text/html; charset=utf-8' }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const html = (title: string, text: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><p>${text}</p>` +
  `${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></body></html>`;

describe('site scans through POST /v1/admin/scrape', () => {
  let site: FakeSite;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    site = await startFakeSite();
    connection = await Connection.connect({ address: stackInfo().temporalAddress });
    client = new Client({ connection, namespace: stackInfo().namespace });
  });
  afterAll(async () => {
    await site?.close();
    await connection?.close();
  });

  describe('a full scan of the fake site', () => {
    let bot: BootstrapResult;

    it('indexes every page with text as a scan source; facts are searchable; robots.txt is obeyed', async () => {
      bot = await newBot();
      const res = await scrape(bot, { url: site.url, max_pages: 100, refresh_days: 0 });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        status: 'scanning',
        url: site.url,
        max_pages: 100,
        include: [],
        exclude: [],
        schedule: { refresh_days: 0, next_run_at: null },
      });

      const [scan] = await settled(bot);
      expect(scan).toMatchObject({
        status: 'done',
        trigger: 'api',
        url: site.url,
        max_pages: 100,
        pages_indexed: FAKE_SITE_FACTS.length,
        pages_queued: 0,
        error: null,
      });
      expect(scan.skipped_reasons).toMatchObject({
        robots: 3,
        timeout: 1,
        too_large: 1,
        not_html: 1,
        duplicate: 1,
        empty: 1,
        http_404: 1,
        off_site: 1,
      });
      expect(scan.finished_at).toBeGreaterThanOrEqual(scan.started_at);

      const listed = await sources(bot);
      const expected = FAKE_SITE_FACTS.map((f) => new URL(f.path, site.url).href);
      expect(listed.map((s) => s.url).sort()).toEqual(expected.sort());
      for (const s of listed) {
        expect(s).toMatchObject({ origin: 'scan', source_id: expect.stringMatching(/^scan:[0-9a-f]{40}$/) });
        expect(s.fragments).toBeGreaterThanOrEqual(1);
      }

      for (const { fact, path } of FAKE_SITE_FACTS) {
        const passages = await retrievePassages(testDb(), bot.bot_id, fact, { limit: 5 });
        expect({ path, found: passages.some((p) => p.text.includes(fact)) }).toEqual({ path, found: true });
      }
      // Spec: another bot never sees these pages.
      const other = await newBot();
      expect(await retrievePassages(testDb(), other.bot_id, MASCOT_FACT)).toEqual([]);

      expect(site.hits.filter((h) => h.startsWith('/private/'))).toEqual([]);
      expect(site.hits).not.toContain('/nofollow-target');
      expect(site.externalHits).toEqual([]);
    }, 45_000);

    it('a chat answer gets a fact found only on a crawled page (the mascot) in its prompt', async () => {
      expect(bot).toBeDefined();
      const label = `scan-${randomUUID()}`;
      const chat = await api('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { message: `What is the company mascot? [[fake:tag:${label}]]` },
      });
      expect(chat.status).toBe(200);
      expect(chat.body.answer).toContain('Fake answer: What is the company mascot?');

      const control = await fetch(new URL(`/_control/requests?tag=${label}`, stackInfo().fakeOpenAIUrl));
      type Recorded = { body: { messages: { role: string; content: string }[] } };
      const { requests } = (await control.json()) as { requests: Recorded[] };
      expect(requests).toHaveLength(1);
      const system = requests[0].body.messages.find((m) => m.role === 'system');
      expect(system?.content).toContain('purple axolotl named Quentin');
    });
  });

  it('a re-scan replaces each page’s source: no new sources, no new fragments', async () => {
    const bot = await newBot();
    expect((await scrape(bot, { url: site.url, max_pages: 5, refresh_days: 0 })).status).toBe(202);
    await settled(bot);
    const first = await sources(bot);
    const fragments = await fragmentCount(bot.bot_id);
    expect(first).toHaveLength(5);

    expect((await scrape(bot, { url: site.url, max_pages: 5, refresh_days: 0 })).status).toBe(202);
    const scans = await settled(bot, (s) => s.length === 2);
    expect(scans[0]).toMatchObject({ status: 'done', pages_indexed: 5, pages_removed: 0 });
    const second = await sources(bot);
    expect(second.map((s) => s.source_id)).toEqual(first.map((s) => s.source_id));
    expect(await fragmentCount(bot.bot_id)).toBe(fragments);
  });

  it('max_pages is clamped, not refused: 0 reads one page, 1000 is reported as 150; non-integers are 400', async () => {
    const bot = await newBot();
    const one = await scrape(bot, { url: site.url, max_pages: 0, refresh_days: 0 });
    expect(one.status).toBe(202);
    expect(one.body.max_pages).toBe(1);
    const [scan] = await settled(bot);
    expect(scan).toMatchObject({ max_pages: 1, pages_indexed: 1 });
    expect((await sources(bot)).map((s) => s.url)).toEqual([site.url]);

    const many = await scrape(bot, { url: await closedPortUrl(), max_pages: 1000, refresh_days: 0 });
    expect(many.status).toBe(202);
    expect(many.body.max_pages).toBe(150);
    expect((await settled(bot, (s) => s.length === 2))[0].max_pages).toBe(150);
    expect((await scrape(bot, { url: site.url, max_pages: -7, refresh_days: 0 })).body.max_pages).toBe(1);
    await settled(bot, (s) => s.length === 3);

    for (const max_pages of [1.5, '5', null, true]) {
      const res = await scrape(bot, { url: site.url, max_pages, refresh_days: 0 });
      expect({ max_pages, status: res.status, code: res.body.code }).toEqual({
        max_pages,
        status: 400,
        code: 'bad_request',
      });
    }
  });

  it('an unreachable site is accepted (202), adds nothing, and shows as failed in the dashboard', async () => {
    const bot = await newBot();
    const url = await closedPortUrl();
    const res = await scrape(bot, { url, refresh_days: 0 });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'scanning', url, max_pages: 1 });
    const [scan] = await settled(bot);
    expect(scan).toMatchObject({
      status: 'failed',
      pages_indexed: 0,
      error: expect.stringContaining(url),
      // The reason as a code the dashboard words for people.
      // The site answers nothing, not even robots.txt (which RFC 9309 makes a disallow-all).
      error_code: 'robots_unreachable',
    });
    expect(await sources(bot)).toEqual([]);
  });

  it('a running scan can be stopped from the dashboard: cancelled, nothing added, and 409 when none runs', async () => {
    // Crawl-delay makes the crawler wait a second between requests: twenty pages would take twenty seconds.
    const slow = await startFakeSite({ robotsTxt: 'User-agent: *\nCrawl-delay: 1\n' });
    try {
      const bot = await newBot();
      const owner = await ownerSession(bot);
      const cancel = () => api(`/v1/dashboard/bots/${bot.bot_id}/scans/cancel`, { method: 'POST', headers: owner });
      expect((await cancel()).status).toBe(409);
      expect((await scrape(bot, { url: slow.url, max_pages: 20, refresh_days: 0 })).status).toBe(202);
      await waitUntil('the scan under way', async () => {
        const scans = (await dashboard(bot)).body.scans;
        return scans[0]?.status === 'scanning' && scans[0].pages_fetched >= 1 ? true : undefined;
      });
      const stopped = await cancel();
      expect(stopped.status).toBe(202);
      expect(stopped.body).toEqual({ status: 'cancelling', workflow_id: siteScanWorkflowId(bot.bot_id) });
      const started = Date.now();
      const [scan] = await settled(bot, (scans) => scans[0]?.status !== 'scanning', 15_000);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(scan).toMatchObject({ status: 'cancelled', error_code: 'cancelled' });
      expect(scan.finished_at).toEqual(expect.any(Number));
      expect(await sources(bot)).toEqual([]);
      expect((await cancel()).status).toBe(409);
      // Another workspace cannot stop it.
      expect((await scrape(bot, { url: slow.url, max_pages: 20, refresh_days: 0 })).status).toBe(202);
      const stranger = await api(`/v1/dashboard/bots/${bot.bot_id}/scans/cancel`, {
        method: 'POST',
        headers: await ownerSession(await newBot()),
      });
      expect(stranger.status).toBe(404);
      expect((await cancel()).status).toBe(202);
      await settled(bot, (scans) => scans[0]?.status === 'cancelled', 15_000);
    } finally {
      await slow.close();
    }
  });

  it('private and internal IP literals, and addresses that are not http(s), are refused with 400', async () => {
    const bot = await newBot();
    const refused = [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://192.168.1.1:8080/admin',
      'http://0x0a000001/',
      'http://[::ffff:10.0.0.1]/',
      'http://[fd00::1]/',
      'http://0.0.0.0/',
      'ftp://example.com/',
      'file:///etc/passwd',
      'http://user:secret@example.com/',
      'not a url',
      '',
    ];
    for (const url of refused) {
      const res = await scrape(bot, { url });
      expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 400, code: 'bad_request' });
    }
    const missing = await scrape(bot, { max_pages: 3 });
    expect([missing.status, missing.body.error]).toEqual([400, expect.stringContaining('url')]);
    // Nothing was started or scheduled.
    expect((await dashboard(bot)).body).toEqual({ running: false, scans: [] });
  });

  it('refresh_days: default 7, replaced by a new scan of the same address, 0 deletes it; others are 400', async () => {
    const bot = await newBot();
    const url = new URL('/about', site.url).href;
    const handle = client.schedule.getHandle(scanScheduleId(bot.bot_id, url));

    const first = await scrape(bot, { url, max_pages: 1 });
    expect(first.status).toBe(202);
    expect(first.body.schedule.refresh_days).toBe(7);
    expect(first.body.schedule.next_run_at).toBeGreaterThan(Date.now() + 7 * DAY_MS - 60_000);
    expect(first.body.schedule.next_run_at).toBeLessThan(Date.now() + 7 * DAY_MS + 60_000);
    let described = await handle.describe();
    expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 7 * DAY_MS })]);
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({
      workflowType: 'siteScanWorkflow',
      args: [{ botId: bot.bot_id, workspaceId: bot.workspace_id, url, maxPages: 1, trigger: 'schedule' }],
    });
    expect(described.info.nextActionTimes[0].getTime()).toBe(first.body.schedule.next_run_at);
    await settled(bot);

    const second = await scrape(bot, { url, max_pages: 3, refresh_days: 30 });
    expect(second.status).toBe(202);
    expect(second.body.schedule.refresh_days).toBe(30);
    expect(second.body.schedule.next_run_at).toBeGreaterThan(Date.now() + 30 * DAY_MS - 60_000);
    described = await handle.describe();
    expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 30 * DAY_MS })]);
    expect(described.action).toMatchObject({ args: [expect.objectContaining({ maxPages: 3 })] });
    await settled(bot, (s) => s.length === 2);

    // What the schedule starts is a real scan of the bot, recorded as such.
    await handle.trigger();
    const scans = await settled(bot, (s) => s.length === 3);
    expect(scans[0]).toMatchObject({ trigger: 'schedule', status: 'done', url, max_pages: 3 });

    for (const refresh_days of [181, -1, 1.5, '7', null]) {
      const res = await scrape(bot, { url, refresh_days });
      expect({ refresh_days, status: res.status, code: res.body.code }).toEqual({
        refresh_days,
        status: 400,
        code: 'bad_request',
      });
    }
    expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 30 * DAY_MS })]);

    const off = await scrape(bot, { url, refresh_days: 0 });
    expect(off.status).toBe(202);
    expect(off.body.schedule).toEqual({ refresh_days: 0, next_run_at: null });
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    await settled(bot, (s) => s.length === 4);
  }, 45_000);

  it('one scan per bot: 409 conflict while one runs (not for other bots), accepted again once it ended', async () => {
    // Crawl-delay makes the crawler wait a second between requests: three pages take about two seconds.
    const slow = await startFakeSite({ robotsTxt: 'User-agent: *\nCrawl-delay: 1\n' });
    try {
      const bot = await newBot();
      expect((await scrape(bot, { url: slow.url, max_pages: 3, refresh_days: 0 })).status).toBe(202);
      const again = await scrape(bot, { url: site.url, refresh_days: 0 });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');
      const during = (await dashboard(bot)).body;
      expect(during.running).toBe(true);
      expect(during.scans).toHaveLength(1);
      expect(during.scans[0].status).toBe('scanning');

      const other = await newBot();
      expect((await scrape(other, { url: site.url, refresh_days: 0 })).status).toBe(202);

      const [scan] = await settled(bot);
      expect(scan).toMatchObject({ status: 'done', pages_indexed: 3 });
      expect((await scrape(bot, { url: site.url, refresh_days: 0 })).status).toBe(202);
      await settled(bot, (s) => s.length === 2);
      await settled(other);
    } finally {
      await slow.close();
    }
  });

  it('the crawler’s page timeout comes from the workflow input; any starter holds the bot’s one scan', async () => {
    const bot = await newBot();
    const started = Date.now();
    const handle = await client.workflow.start(siteScanWorkflow, {
      workflowId: siteScanWorkflowId(bot.bot_id),
      taskQueue: stackInfo().taskQueue,
      args: [
        {
          botId: bot.bot_id,
          workspaceId: bot.workspace_id,
          url: `${site.url}hang`,
          maxPages: 1,
          trigger: 'api',
          pageTimeoutMs: 500,
        },
      ],
    });
    expect((await scrape(bot, { url: site.url, refresh_days: 0 })).status).toBe(409);
    expect(await handle.result()).toMatchObject({ status: 'failed', fetched: 1, indexed: 0 });
    expect(Date.now() - started).toBeLessThan(8_000);
    const [scan] = await settled(bot);
    expect(scan).toMatchObject({ status: 'failed', skipped_reasons: { timeout: 1 } });
  });

  it('a complete re-read removes pages gone from the site; failing pages and reads cut short keep theirs', async () => {
    const pages: Record<string, { status?: number; body: string }> = {
      '/': { body: html('Home', 'Welcome to the lighthouse museum.', ['/a', '/b', '/c']) },
      '/a': { body: html('A', 'The lamp room has a Fresnel lens from 1891.') },
      '/b': { body: html('B', 'The keeper logbooks start in 1902.') },
      '/c': { body: html('C', 'The gift shop sells tin foghorns.') },
    };
    const small = await mutableSite(pages);
    try {
      const bot = await newBot();
      const pathsOf = async () => (await sources(bot)).map((s) => new URL(s.url!).pathname).sort();
      expect((await scrape(bot, { url: small.url, max_pages: 10, refresh_days: 0 })).status).toBe(202);
      await settled(bot);
      expect(await pathsOf()).toEqual(['/', '/a', '/b', '/c']);

      // /c is gone (no link, 404); /b answers 503 for now.
      pages['/'] = { body: html('Home', 'Welcome to the lighthouse museum.', ['/a', '/b']) };
      delete pages['/c'];
      pages['/b'] = { status: 503, body: 'busy' };
      expect((await scrape(bot, { url: small.url, max_pages: 10, refresh_days: 0 })).status).toBe(202);
      const [second] = await settled(bot, (s) => s.length === 2);
      expect(second).toMatchObject({ status: 'done', pages_removed: 1, skipped_reasons: { http_503: 1 } });
      expect(await pathsOf()).toEqual(['/', '/a', '/b']);

      // max_pages 1 leaves /a and /b unvisited: not a complete read, so nothing is removed.
      pages['/b'] = { body: html('B', 'The keeper logbooks start in 1902.') };
      expect((await scrape(bot, { url: small.url, max_pages: 1, refresh_days: 0 })).status).toBe(202);
      const [third] = await settled(bot, (s) => s.length === 3);
      expect(third).toMatchObject({ status: 'done', pages_indexed: 1, pages_removed: 0 });
      expect(await pathsOf()).toEqual(['/', '/a', '/b']);
    } finally {
      await small.close();
    }
  });

  it('is never rate limited, and the dashboard view is only for the key’s own bot', async () => {
    const bot = await newBot();
    const results = [];
    for (let i = 0; i < 70; i += 10) {
      results.push(...(await Promise.all(Array.from({ length: 10 }, () => scrape(bot, { max_pages: 2 })))));
    }
    expect(results.map((r) => r.status)).toEqual(Array(70).fill(400));
    expect(results.some((r) => r.headers.has('ratelimit-limit'))).toBe(false);

    const other = await newBot();
    const foreign = await api(`/v1/dashboard/bots/${other.bot_id}/scans`, { headers: await ownerSession(bot) });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
    const noKey = await api(`/v1/dashboard/bots/${bot.bot_id}/scans`);
    expect(noKey.status).toBe(401);
  });

  describe('sitemaps and path patterns', () => {
    let mapped: FakeSite;
    const sitemapPaths = SITEMAP_ONLY_FACTS.map((f) => f.path);
    beforeAll(async () => {
      // robots.txt names an index; the index lists a plain and a gzipped sitemap; /sitemap.xml is another one.
      mapped = await startFakeSite({
        robotsTxt: 'User-agent: *\nDisallow: /private/\nSitemap: /maps/index.xml\n',
        sitemaps: {
          '/maps/index.xml': (base) => sitemapIndexXml(base, ['/maps/guides.xml', '/maps/blog.xml.gz']),
          '/maps/guides.xml': (base) =>
            urlsetXml(
              base,
              sitemapPaths.filter((p) => p.startsWith('/guides/')),
            ),
          '/maps/blog.xml.gz': (base) =>
            gzipSync(
              urlsetXml(
                base,
                sitemapPaths.filter((p) => p.startsWith('/blog/')),
              ),
            ),
          '/sitemap.xml': (base) => urlsetXml(base, ['/pages/30']),
        },
      });
    });
    afterAll(() => mapped?.close());
    const pathsOf = async (bot: BootstrapResult) => (await sources(bot)).map((s) => new URL(s.url!).pathname).sort();

    it('pages only a sitemap leads to are read, from robots.txt Sitemap lines (an index, gzip) and /sitemap.xml', async () => {
      const bot = await newBot();
      const res = await scrape(bot, { url: mapped.url, max_pages: 6, refresh_days: 0 });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ include: [], exclude: [] });
      const [scan] = await settled(bot);
      expect(scan).toMatchObject({ status: 'done', pages_indexed: 6, sitemap_urls: 5, include: [], exclude: [] });
      // The start page, the sitemaps' pages (before any link), nothing else.
      expect(await pathsOf(bot)).toEqual(['/', ...sitemapPaths, '/pages/30'].sort());
      for (const { fact } of SITEMAP_ONLY_FACTS) {
        const passages = await retrievePassages(testDb(), bot.bot_id, fact, { limit: 3 });
        expect({ fact, found: passages.some((p) => p.text.includes(fact)) }).toEqual({ fact, found: true });
      }
      const text = (
        await api(`/v1/api/knowledge/${(await sources(bot)).find((s) => s.url?.endsWith('/pages/30'))!.source_id}`, {
          key: bot.keys.secret_key,
        })
      ).body.text as string;
      // A page's source keeps its structure: its heading as a Markdown heading, paragraphs apart.
      expect(text).toBe(`# Product 30\n\nProduct 30 is a widget for workshops.\n\n${pageFact(30)}`);
    });

    it('include and exclude patterns hold for sitemap pages and links alike, and are listed with the scan', async () => {
      const bot = await newBot();
      const include = ['/guides/*', '/blog/*', '/pages/1*', '/guides/*'];
      const exclude = ['/guides/billing', '/blog/2024/*'];
      const before = mapped.hits.length;
      const res = await scrape(bot, { url: mapped.url, max_pages: 20, refresh_days: 0, include, exclude });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ include: ['/guides/*', '/blog/*', '/pages/1*'], exclude });
      const [scan] = await settled(bot);
      expect(scan).toMatchObject({
        status: 'done',
        include: ['/guides/*', '/blog/*', '/pages/1*'],
        exclude,
        sitemap_urls: 2,
        skipped_reasons: { excluded: 1 },
      });
      // The start page is read for its links, not kept; /pages/2… (outside) are never requested.
      expect(await pathsOf(bot)).toEqual(['/blog/launch', '/guides/setup', '/pages/1', '/pages/10', '/pages/11']);
      const requested = mapped.hits.slice(before).filter((h) => !h.startsWith('/maps/') && !h.endsWith('.txt'));
      expect(requested.sort()).toEqual([
        '/',
        '/blog/launch',
        '/guides/setup',
        '/pages/1',
        '/pages/10',
        '/pages/11',
        '/sitemap.xml',
      ]);
    });

    it('patterns that match nothing: the scan says so; bad patterns are 400 at the boundaries', async () => {
      const bot = await newBot();
      expect((await scrape(bot, { url: mapped.url, refresh_days: 0, include: ['/nothing/*'] })).status).toBe(202);
      const [scan] = await settled(bot);
      expect(scan).toMatchObject({ status: 'failed', pages_indexed: 0, error_code: 'no_match' });

      const twenty = Array.from({ length: 20 }, (_, i) => `/p${i}/*`);
      const longest = `/${'a'.repeat(199)}`;
      expect(
        (await scrape(bot, { url: mapped.url, refresh_days: 0, include: twenty, exclude: [longest] })).status,
      ).toBe(202);
      await settled(bot, (s) => s.length === 2);
      const refused: unknown[] = [[...twenty, '/p20/*'], [`${longest}a`], ['docs/*'], ['/a b'], [''], '/docs/*', [7]];
      for (const include of refused) {
        for (const field of ['include', 'exclude']) {
          const res = await scrape(bot, { url: mapped.url, refresh_days: 0, [field]: include });
          expect({ include, field, status: res.status, code: res.body.code }).toEqual({
            include,
            field,
            status: 400,
            code: 'bad_request',
          });
        }
      }
    });

    it('a refresh keeps the patterns: the schedule carries them and its scan honours them', async () => {
      const bot = await newBot();
      const include = ['/guides/*'];
      const exclude = ['/guides/billing'];
      const res = await scrape(bot, { url: mapped.url, max_pages: 5, refresh_days: 30, include, exclude });
      expect(res.status).toBe(202);
      await settled(bot);
      const handle = client.schedule.getHandle(scanScheduleId(bot.bot_id, mapped.url));
      expect((await handle.describe()).action).toMatchObject({
        args: [expect.objectContaining({ maxPages: 5, include, exclude, trigger: 'schedule' })],
      });
      await handle.trigger();
      const scans = await settled(bot, (s) => s.length === 2);
      expect(scans[0]).toMatchObject({ trigger: 'schedule', status: 'done', include, exclude, pages_indexed: 1 });
      expect(await pathsOf(bot)).toEqual(['/guides/setup']);
      expect((await scrape(bot, { url: mapped.url, refresh_days: 0 })).status).toBe(202);
      await settled(bot, (s) => s.length === 3);
    });
  });

  it('the Russian page of a scanned site answers a Russian question', async () => {
    const bot = await newBot();
    expect((await scrape(bot, { url: new URL('/ru', site.url).href, max_pages: 1, refresh_days: 0 })).status).toBe(202);
    await settled(bot);
    const passages = await retrievePassages(testDb(), bot.bot_id, 'Какой секретный пароль склада?');
    expect(passages.map((p) => p.text).join('\n')).toContain(RUSSIAN_FACT);
  });
});
