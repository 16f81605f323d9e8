import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

import {
  contentHash,
  crawlSite,
  normalizeUrl,
  siteKey,
  type CrawlProgress,
  type CrawlResult,
} from '../../lib/crawl/crawler';
import { createSafeFetch, type SafeFetch } from '../../lib/http/safe-fetch';
import {
  BOILERPLATE_MARKERS,
  FAKE_SITE_FACTS,
  MASCOT_FACT,
  PRIVATE_FACT,
  SITEMAP_ONLY_FACTS,
  pageFact,
  sitemapIndexXml,
  startFakeSite,
  urlsetXml,
  type FakeSite,
} from '../support/fake-site';

const UA = 'AgentPlatformBot/1.0 (+https://example.com/bot)';
const loopbackFetch = createSafeFetch({ allowLoopback: true });

/** Wraps the SafeFetch to see every URL the crawler asks for (it has no other way out). */
function recording(inner: SafeFetch = loopbackFetch): { fetch: SafeFetch; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (url, init) => {
      urls.push(url);
      return inner(url, init);
    },
  };
}

function crawl(site: FakeSite, overrides: Partial<Parameters<typeof crawlSite>[0]> = {}): Promise<CrawlResult> {
  return crawlSite({
    startUrl: site.url,
    maxPages: 100,
    fetch: loopbackFetch,
    userAgent: UA,
    pageTimeoutMs: 1000,
    ...overrides,
  });
}

describe('crawlSite on the fake site (complete crawl)', () => {
  let site: FakeSite;
  let result: CrawlResult;
  let urls: string[];
  const progress: CrawlProgress[] = [];

  beforeAll(async () => {
    site = await startFakeSite();
    const rec = recording();
    urls = rec.urls;
    result = await crawl(site, { fetch: rec.fetch, onProgress: (p) => void progress.push(p) });
  });
  afterAll(() => site.close());

  const at = (path: string) => new URL(path, site.url).href;
  const reasonOf = (path: string) => result.skipped.find((s) => s.url === at(path))?.reason;

  test('indexes every reachable page, at every depth, each with its fact', () => {
    expect(result.error).toBeUndefined();
    for (const { path, fact } of FAKE_SITE_FACTS) {
      const page = result.pages.find((p) => p.url === at(path));
      expect({ path, text: page?.text }).toEqual({ path, text: expect.stringContaining(fact) });
    }
    expect(result.pages).toHaveLength(FAKE_SITE_FACTS.length);
    expect(result.pages[0].url).toBe(site.url);
    expect(result.pages.find((p) => p.url === at('/about/mascot'))?.title).toBe('Our mascot | Acme Widgets');
    expect(new Set(result.pages.map((p) => p.contentHash)).size).toBe(result.pages.length);
  });

  test('keeps only main content: no header, nav, aside, footer, script or hidden text', () => {
    for (const page of result.pages) {
      for (const marker of BOILERPLATE_MARKERS)
        expect({ url: page.url, marker, has: page.text.includes(marker) }).toEqual({
          url: page.url,
          marker,
          has: false,
        });
    }
    expect(result.pages.find((p) => p.url === at('/pages/7'))?.text).toBe(
      `# Product 7\n\nProduct 7 is a widget for workshops.\n\n${pageFact(7)}\n\nSee also product 17.`,
    );
  });

  test('robots.txt is fetched first and once; disallowed, nofollow and external URLs are never requested', () => {
    expect(site.hits[0]).toBe('/robots.txt');
    expect(site.hits.filter((h) => h === '/robots.txt')).toHaveLength(1);
    expect(site.hits.filter((h) => h.startsWith('/private/'))).toEqual([]);
    expect(site.hits).not.toContain('/nofollow-target');
    expect(site.externalHits).toEqual([]);
    expect(urls.every((u) => u.startsWith(site.url))).toBe(true);
    expect(result.pages.some((p) => p.text.includes(PRIVATE_FACT))).toBe(false);
    expect(reasonOf('/private/secret')).toBe('robots');
    expect(reasonOf('/private/payroll')).toBe('robots');
  });

  test('follows redirects hop by hop, recording the final URL and refusing disallowed or off-site targets', () => {
    expect(result.pages.map((p) => p.url)).toContain(at('/new-page'));
    expect(result.pages.map((p) => p.url)).not.toContain(at('/old-page'));
    expect(site.hits).toEqual(expect.arrayContaining(['/old-page', '/new-page']));
    expect(reasonOf('/staff')).toBe('robots');
    expect(reasonOf('/partner')).toBe('off_site');
  });

  test('skips each trap with its reason', () => {
    expect({
      dup: reasonOf('/dup-b'),
      pdf: reasonOf('/file.pdf'),
      huge: reasonOf('/huge'),
      hang: reasonOf('/hang'),
      missing: reasonOf('/missing'),
      empty: reasonOf('/empty'),
    }).toEqual({
      dup: 'duplicate',
      pdf: 'not_html',
      huge: 'too_large',
      hang: 'timeout',
      missing: 'http_404',
      empty: 'empty',
    });
    expect(result.pages.map((p) => p.url)).toContain(at('/dup-a'));
  });

  test('requests each URL once (fragments and repeated links folded)', () => {
    const pageHits = site.hits.filter((h) => h !== '/robots.txt');
    expect(pageHits).toHaveLength(new Set(pageHits).size);
    expect(site.hits.filter((h) => h === '/about')).toHaveLength(1);
  });

  test('reports progress after every URL and sitemap file, monotonically, ending with the result totals', () => {
    // robots.txt names /sitemap.xml, which this site does not have: one request, right after the start page.
    expect(site.hits.filter((h) => h === '/sitemap.xml')).toHaveLength(1);
    expect(site.hits.slice(0, 3)).toEqual(['/robots.txt', '/', '/sitemap.xml']);
    expect(progress[0].lastUrl).toBe(at('/sitemap.xml'));
    expect(progress.length).toBe(result.pages.length + result.skipped.length + 1);
    for (let i = 1; i < progress.length; i++) {
      for (const key of ['fetched', 'indexed', 'skipped'] as const) {
        expect(progress[i][key]).toBeGreaterThanOrEqual(progress[i - 1][key]);
      }
    }
    const pageSteps = progress.slice(1);
    pageSteps.forEach((p, i) => expect(p.indexed + p.skipped).toBe(i + 1));
    const last = progress[progress.length - 1];
    expect(last).toEqual(result.progress);
    expect(last).toMatchObject({
      indexed: result.pages.length,
      skipped: result.skipped.length,
      queued: 0,
      sitemapUrls: 0,
    });
    // Every request but robots.txt and the sitemap, and a redirect with its followed hop (/old-page → /new-page) is
    // one fetch.
    expect(last.fetched).toBe(site.hits.length - 3);
    const reasons: Record<string, number> = {};
    for (const s of result.skipped) reasons[s.reason] = (reasons[s.reason] ?? 0) + 1;
    expect(last.skippedReasons).toEqual(reasons);
    expect(progress[1].lastUrl).toBe(site.url);
  });
});

describe('crawlSite limits and failures', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(() => site.close());

  test('maxPages 5 gives exactly 5 pages, breadth first', async () => {
    const result = await crawl(site, { maxPages: 5 });
    expect(result.pages.map((p) => new URL(p.url).pathname)).toEqual([
      '/',
      '/about',
      '/pages/1',
      '/pages/2',
      '/pages/3',
    ]);
    expect(result.progress.indexed).toBe(5);
    expect(result.progress.queued).toBeGreaterThan(0);
  });

  test('maxPages 1 stops after the start page', async () => {
    const before = site.hits.length;
    const result = await crawl(site, { maxPages: 1 });
    expect(result.pages.map((p) => p.url)).toEqual([site.url]);
    expect(site.hits.slice(before)).toEqual(['/robots.txt', '/']);
  });

  test('at most maxPages * 3 requests when pages keep yielding nothing', async () => {
    // Every page is empty but links to ten more: without the cap this would never end.
    const server = http.createServer((req, res) => {
      const n = Number(req.url?.slice(1)) || 0;
      const links = Array.from({ length: 10 }, (_, i) => `<a href="/${n * 10 + i + 1}">x</a>`).join('');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<nav>${links}</nav>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const result = await crawlSite({ startUrl: url, maxPages: 4, fetch: loopbackFetch, userAgent: UA });
      expect(result.pages).toEqual([]);
      expect(result.progress.fetched).toBe(12);
      expect(result.error).toMatch(/No page with text/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a start URL that redirects is recorded under its final URL and the crawl goes on from there', async () => {
    const result = await crawl(site, { startUrl: new URL('/old-page', site.url).href, maxPages: 3 });
    expect(result.pages.map((p) => new URL(p.url).pathname)).toEqual(['/new-page', '/', '/about']);
  });

  test('unreachable site: zero pages and an error, no throw', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await crawlSite({
      startUrl: `http://127.0.0.1:${port}/`,
      maxPages: 5,
      fetch: loopbackFetch,
      userAgent: UA,
    });
    expect(result.pages).toEqual([]);
    // robots.txt is unreachable too, which RFC 9309 says means "crawl nothing".
    expect(result.skipped).toEqual([{ url: `http://127.0.0.1:${port}/`, reason: 'robots' }]);
    expect(result.error).toMatch(
      /Start page .* could not be crawled \(robots\): robots.txt could not be fetched \(network/,
    );
  });

  test('start URL blocked by the SSRF policy: zero pages, error says blocked, nothing requested', async () => {
    const before = site.hits.length;
    const result = await crawl(site, { fetch: createSafeFetch({ allowLoopback: false }) });
    expect(result.pages).toEqual([]);
    expect(result.skipped).toEqual([{ url: site.url, reason: 'blocked' }]);
    expect(result.error).toMatch(/blocked/);
    expect(site.hits.length).toBe(before);
  });

  test('invalid start URLs give an error; invalid options throw', async () => {
    for (const startUrl of ['not a url', 'ftp://example.com/', 'http://user:pw@example.com/']) {
      const result = await crawlSite({ startUrl, maxPages: 1, fetch: loopbackFetch, userAgent: UA });
      expect([result.pages, result.error]).toEqual([[], expect.stringMatching(/Invalid start URL/)]);
    }
    const base = { startUrl: site.url, fetch: loopbackFetch, userAgent: UA };
    await expect(crawlSite({ ...base, maxPages: 0 })).rejects.toThrow(TypeError);
    await expect(crawlSite({ ...base, maxPages: 1.5 })).rejects.toThrow(TypeError);
    await expect(crawlSite({ ...base, maxPages: 1, userAgent: ' ' })).rejects.toThrow(TypeError);
  });

  test('aborting rejects with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    const crawling = crawl(site, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.indexed === 2) controller.abort(reason);
      },
    });
    await expect(crawling).rejects.toBe(reason);
  });
});

describe('crawlSite and robots.txt availability', () => {
  test('robots.txt answering 503: nothing but robots.txt is requested', async () => {
    const site = await startFakeSite({ robotsStatus: 503 });
    try {
      const result = await crawl(site);
      expect(result.pages).toEqual([]);
      expect(result.error).toMatch(/robots.*HTTP 503/);
      expect(site.hits).toEqual(['/robots.txt']);
    } finally {
      await site.close();
    }
  });

  test('robots.txt missing (404): everything may be crawled, private pages included', async () => {
    const site = await startFakeSite({ robotsStatus: 404 });
    try {
      const result = await crawl(site, { maxPages: 6 });
      expect(site.hits).toContain('/private/secret');
      expect(result.pages.some((p) => p.text.includes(PRIVATE_FACT))).toBe(true);
    } finally {
      await site.close();
    }
  });

  test('Crawl-delay is honoured up to maxCrawlDelayMs', async () => {
    const site = await startFakeSite({ robotsTxt: 'User-agent: *\nCrawl-delay: 60\n' });
    try {
      const started = Date.now();
      const result = await crawl(site, { maxPages: 3, maxCrawlDelayMs: 200 });
      const elapsed = Date.now() - started;
      expect(result.pages).toHaveLength(3);
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(elapsed).toBeLessThan(5000);
    } finally {
      await site.close();
    }
  });
});

describe('crawlSite with sitemaps and path patterns', () => {
  const pathsOf = (r: CrawlResult) => r.pages.map((p) => new URL(p.url).pathname);

  test('an index from robots.txt leads to plain and gzipped sitemaps; their pages come first, then links', async () => {
    const site = await startFakeSite({
      robotsTxt: 'User-agent: *\nDisallow: /private/\nSitemap: /maps/index.xml\n',
      sitemaps: {
        '/maps/index.xml': (base) =>
          sitemapIndexXml(base, ['/maps/guides.xml', '/maps/blog.xml.gz', 'http://localhost:1/elsewhere.xml']),
        '/maps/guides.xml': (base) =>
          urlsetXml(base, ['/guides/setup', '/guides/billing', '/private/secret', 'http://localhost:1/partners']),
        '/maps/blog.xml.gz': (base) => gzipSync(urlsetXml(base, ['/blog/launch', '/blog/2024/recall'])),
      },
    });
    try {
      const rec = recording();
      const result = await crawl(site, { maxPages: 6, fetch: rec.fetch });
      // The start page, then the sitemaps' pages in their order, then the start page's links.
      expect(pathsOf(result)).toEqual([
        '/',
        '/guides/setup',
        '/guides/billing',
        '/blog/launch',
        '/blog/2024/recall',
        '/about',
      ]);
      for (const { fact } of SITEMAP_ONLY_FACTS) expect(result.pages.some((p) => p.text.includes(fact))).toBe(true);
      // Listed pages robots.txt disallows are taken, then refused without a request, as links are.
      expect(result.progress.sitemapUrls).toBe(5);
      expect(result.skipped).toContainEqual({ url: new URL('/private/secret', site.url).href, reason: 'robots' });
      // Every file of the index was read once, and /sitemap.xml (absent here) was tried; nothing off the site.
      expect(site.hits.filter((h) => h.startsWith('/maps/') || h === '/sitemap.xml').sort()).toEqual([
        '/maps/blog.xml.gz',
        '/maps/guides.xml',
        '/maps/index.xml',
        '/sitemap.xml',
      ]);
      expect(site.hits.filter((h) => h.startsWith('/private/'))).toEqual([]);
      expect(rec.urls.every((u) => u.startsWith(site.url))).toBe(true);
    } finally {
      await site.close();
    }
  });

  test('/sitemap.xml at the root is read without a Sitemap line', async () => {
    const site = await startFakeSite({
      robotsTxt: 'User-agent: *\nDisallow: /private/\n',
      sitemaps: { '/sitemap.xml': (base) => urlsetXml(base, ['/guides/setup']) },
    });
    try {
      const result = await crawl(site, { maxPages: 2 });
      expect(pathsOf(result)).toEqual(['/', '/guides/setup']);
    } finally {
      await site.close();
    }
  });

  test('include and exclude patterns filter sitemap pages and links alike; outside them nothing is requested', async () => {
    const paths = SITEMAP_ONLY_FACTS.map((f) => f.path);
    const site = await startFakeSite({ sitemaps: { '/sitemap.xml': (base) => urlsetXml(base, paths) } });
    try {
      const result = await crawl(site, {
        include: ['/guides/*', '/blog/*', '/pages/1*'],
        exclude: ['/guides/billing', '/blog/2024/*'],
      });
      // The start page is read for its links but not kept; /pages/1 links /pages/11, /pages/2 (excluded) is never read.
      expect(pathsOf(result).sort()).toEqual(['/blog/launch', '/guides/setup', '/pages/1', '/pages/10', '/pages/11']);
      expect(result.skipped).toEqual([{ url: site.url, reason: 'excluded' }]);
      const pages = site.hits.filter((h) => !['/robots.txt', '/sitemap.xml'].includes(h));
      expect(pages.sort()).toEqual(['/', '/blog/launch', '/guides/setup', '/pages/1', '/pages/10', '/pages/11']);
      expect(result.progress.sitemapUrls).toBe(2);
    } finally {
      await site.close();
    }
  });

  test('patterns that match nothing: no page, and an error that says so', async () => {
    const site = await startFakeSite();
    try {
      const result = await crawl(site, { include: ['/nothing/*'] });
      expect(result.pages).toEqual([]);
      expect(result.errorCode).toBe('no_match');
      expect(result.error).toMatch(/matched the include and exclude path patterns/);
      expect(site.hits).toEqual(['/robots.txt', '/', '/sitemap.xml']);
    } finally {
      await site.close();
    }
  });

  test('a broken sitemap is skipped and the crawl follows links as before', async () => {
    const site = await startFakeSite({ sitemaps: { '/sitemap.xml': '<html><body>Not a sitemap</body></html>' } });
    try {
      const result = await crawl(site, { maxPages: 3 });
      expect(pathsOf(result)).toEqual(['/', '/about', '/pages/1']);
      expect(result.progress.sitemapUrls).toBe(0);
    } finally {
      await site.close();
    }
  });
});

describe('URL identity helpers', () => {
  test('normalizeUrl', () => {
    expect(normalizeUrl('HTTP://Example.COM:80/a/../b/?x=1#frag')).toBe('http://example.com/b/?x=1');
    expect(normalizeUrl('https://example.com:443/p?')).toBe('https://example.com/p');
    expect(normalizeUrl('https://example.com:8443/index.html')).toBe('https://example.com:8443/index.html');
    expect(normalizeUrl('page', 'https://example.com/dir/')).toBe('https://example.com/dir/page');
    expect(normalizeUrl('mailto:a@b.c')).toBeUndefined();
    expect(normalizeUrl('https://u:p@example.com/')).toBeUndefined();
  });

  test('siteKey treats www. as the same site but not another scheme, port or subdomain', () => {
    const key = siteKey('https://example.com/');
    expect(siteKey('https://www.example.com/x')).toBe(key);
    expect(siteKey('http://example.com/')).not.toBe(key);
    expect(siteKey('https://example.com:8443/')).not.toBe(key);
    expect(siteKey('https://blog.example.com/')).not.toBe(key);
  });

  test('contentHash ignores case and whitespace', () => {
    expect(contentHash('Hello  World\n')).toBe(contentHash('hello world'));
    expect(contentHash('Hello World')).not.toBe(contentHash('Hello World!'));
  });

  test('the mascot fact is among the expected facts', () => {
    expect(FAKE_SITE_FACTS.map((f) => f.fact)).toContain(MASCOT_FACT);
  });
});
