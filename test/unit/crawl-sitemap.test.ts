import { gzipSync } from 'node:zlib';

import { hasPatterns, matchesPathPattern, pathAllowed } from '../../lib/crawl/patterns';
import { parseSitemap, readSitemaps, type SitemapOptions } from '../../lib/crawl/sitemap';
import { OutboundError, type SafeFetch } from '../../lib/http/safe-fetch';

const SITE = 'https://example.com';

describe('parseSitemap', () => {
  test('a urlset gives its pages, an index its sitemaps, namespace prefixes and entities included', () => {
    const urlset = `<?xml version="1.0"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url><loc> ${SITE}/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod><image:image><image:loc>${SITE}/i.png</image:loc></image:image></url>
        <url><loc>${SITE}/b</loc></url>
        <url><lastmod>2024-01-01</lastmod></url>
      </urlset>`;
    expect(parseSitemap(urlset)).toEqual({ pages: [`${SITE}/a?x=1&y=2`, `${SITE}/b`], sitemaps: [] });
    const index = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sm:sitemap><sm:loc>${SITE}/one.xml</sm:loc></sm:sitemap></sm:sitemapindex>`;
    expect(parseSitemap(index)).toEqual({ pages: [], sitemaps: [`${SITE}/one.xml`] });
    expect(parseSitemap('<urlset/>')).toEqual({ pages: [], sitemaps: [] });
  });

  test('anything else is said to be no sitemap', () => {
    expect(parseSitemap('<html><body>Not found</body></html>')).toEqual({ error: 'not_sitemap' });
    expect(parseSitemap('User-agent: *')).toEqual({ error: 'not_sitemap' });
    // A DOCTYPE whose entities expand exponentially stays within the parser's limits: nothing is expanded.
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`,
    ).join('')}]><urlset><url><loc>&lol9;</loc></url></urlset>`;
    expect(JSON.stringify(parseSitemap(laughs)).length).toBeLessThan(1000);
  });
});

describe('readSitemaps', () => {
  function site(files: Record<string, string | Buffer | Error>): { fetch: SafeFetch; urls: string[] } {
    const urls: string[] = [];
    const fetch: SafeFetch = async (url) => {
      urls.push(url);
      const body = files[new URL(url).pathname];
      if (body instanceof Error) throw body;
      return { status: body === undefined ? 404 : 200, headers: {}, body: Buffer.from(body ?? 'missing'), url };
    };
    return { fetch, urls };
  }
  const options = (fetch: SafeFetch, over: Partial<SitemapOptions> = {}): SitemapOptions => ({
    fetch,
    userAgent: 'AgentPlatformBot/1.0',
    timeoutMs: 1000,
    maxFiles: 10,
    maxBytes: 1024 * 1024,
    maxUrls: 1000,
    allowedFile: async (url) => (url.startsWith(SITE) ? url : undefined),
    allowedPage: (url) => (url.startsWith(SITE) ? url : undefined),
    ...over,
  });
  const urlset = (paths: string[]) =>
    `<urlset>${paths.map((p) => `<url><loc>${SITE}${p}</loc></url>`).join('')}</urlset>`;
  const index = (paths: string[]) =>
    `<sitemapindex>${paths.map((p) => `<sitemap><loc>${SITE}${p}</loc></sitemap>`).join('')}</sitemapindex>`;

  test('follows indexes breadth first, once per file, gunzipping by content; pages deduplicated and filtered', async () => {
    const { fetch, urls } = site({
      '/index.xml': index(['/a.xml', '/b.xml.gz', '/index.xml', '/missing.xml']),
      '/a.xml': urlset(['/1', '/2', '/1']),
      '/b.xml.gz': gzipSync(urlset(['/3', '/2'])),
    });
    const result = await readSitemaps(
      [`${SITE}/index.xml`, `${SITE}/index.xml`, 'https://other.example/s.xml'],
      options(fetch),
    );
    expect(result.urls).toEqual([`${SITE}/1`, `${SITE}/2`, `${SITE}/3`]);
    expect(urls).toEqual([`${SITE}/index.xml`, `${SITE}/a.xml`, `${SITE}/b.xml.gz`, `${SITE}/missing.xml`]);
    expect(result.files).toBe(4);
    expect(result.skipped).toEqual([
      { url: 'https://other.example/s.xml', reason: 'robots' },
      { url: `${SITE}/missing.xml`, reason: 'http_404' },
    ]);
  });

  test('bounded: files, addresses, and bytes after gunzip (a gzip bomb is refused, not inflated)', async () => {
    const many = Array.from({ length: 30 }, (_, i) => `/s${i}.xml`);
    const files: Record<string, string | Buffer> = { '/index.xml': index(many) };
    for (const p of many) files[p] = urlset([`${p}-page`]);
    const limited = await readSitemaps([`${SITE}/index.xml`], options(site(files).fetch, { maxFiles: 5 }));
    expect([limited.files, limited.urls.length]).toEqual([5, 4]);
    const few = await readSitemaps([`${SITE}/index.xml`], options(site(files).fetch, { maxUrls: 2 }));
    expect(few.urls).toEqual([`${SITE}/s0.xml-page`, `${SITE}/s1.xml-page`]);

    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, ' '));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const { fetch } = site({ '/big.xml.gz': bomb, '/bad.xml.gz': Buffer.from([0x1f, 0x8b, 1, 2, 3]) });
    const refused = await readSitemaps([`${SITE}/big.xml.gz`, `${SITE}/bad.xml.gz`], options(fetch));
    expect(refused.skipped).toEqual([
      { url: `${SITE}/big.xml.gz`, reason: 'too_large' },
      { url: `${SITE}/bad.xml.gz`, reason: 'bad_gzip' },
    ]);
  });

  test('network failures are skipped with their code; the caller abort and programmer errors are thrown', async () => {
    const { fetch } = site({ '/s.xml': new OutboundError('timeout', 'slow') });
    expect((await readSitemaps([`${SITE}/s.xml`], options(fetch))).skipped).toEqual([
      { url: `${SITE}/s.xml`, reason: 'timeout' },
    ]);
    const broken = site({ '/s.xml': new TypeError('bug') }).fetch;
    await expect(readSitemaps([`${SITE}/s.xml`], options(broken))).rejects.toThrow('bug');
    const controller = new AbortController();
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(readSitemaps([`${SITE}/s.xml`], options(fetch, { signal: controller.signal }))).rejects.toBe(reason);
  });
});

describe('path patterns', () => {
  test('a pattern matches the whole path; * matches any run of characters, / included', () => {
    const cases: [string, string, boolean][] = [
      ['/docs/*', '/docs/a', true],
      ['/docs/*', '/docs/a/b/c', true],
      ['/docs/*', '/docs/', true],
      ['/docs/*', '/docs', false],
      ['/docs*', '/docs', true],
      ['/docs*', '/docs-old/x', true],
      ['/pricing', '/pricing', true],
      ['/pricing', '/pricing/eu', false],
      ['/blog/*/comments', '/blog/2024/05/comments', true],
      ['/blog/*/comments', '/blog/2024/05/comments/1', false],
      ['*.pdf', '/files/a.pdf', true],
      ['/Docs/*', '/docs/a', false],
    ];
    for (const [pattern, path, expected] of cases) {
      expect({ pattern, path, matches: matchesPathPattern(path, pattern) }).toEqual({
        pattern,
        path,
        matches: expected,
      });
    }
  });

  test('hostile patterns are matched in linear time', () => {
    expect(matchesPathPattern(`/${'a'.repeat(5000)}b`, `/${'*a'.repeat(100)}`)).toBe(false);
  });

  test('include (any of) and exclude (none of) on the decoded path, query left out', () => {
    const p = { include: ['/docs/*', '/über/*'], exclude: ['/docs/old/*'] };
    expect(pathAllowed('https://e.com/docs/a?x=/docs/old/', p)).toBe(true);
    expect(pathAllowed('https://e.com/docs/old/a', p)).toBe(false);
    expect(pathAllowed('https://e.com/blog/a', p)).toBe(false);
    expect(pathAllowed('https://e.com/%C3%BCber/team', p)).toBe(true);
    expect(pathAllowed('https://e.com/anything', {})).toBe(true);
    expect(pathAllowed('https://e.com/blog/x', { exclude: ['/blog/*'] })).toBe(false);
    expect([hasPatterns({}), hasPatterns({ include: [] }), hasPatterns({ exclude: ['/x'] })]).toEqual([
      false,
      false,
      true,
    ]);
  });
});
