import { OutboundBlockedError, OutboundError, type SafeFetch, type SafeResponse } from '../../lib/http/safe-fetch';
import { fetchRobots, parseRobots, robotsForStatus } from '../../lib/crawl/robots';

const UA = 'AgentPlatformBot/1.0 (+https://example.com/bot)';

function allowed(robotsTxt: string, paths: string[], ua = UA): boolean[] {
  const robots = parseRobots(robotsTxt, ua);
  return paths.map((p) => robots.isAllowed(p));
}

describe('parseRobots rules (RFC 9309)', () => {
  test('longest match wins, Allow wins a tie, no match allows', () => {
    const txt = `User-agent: *
Disallow: /example/
Allow: /example/page/
Disallow: /example/page/disallowed.gif
Allow: /tie
Disallow: /tie`;
    expect(
      allowed(txt, [
        '/example/page/',
        '/example/page/disallowed.gif',
        '/example/other',
        '/example',
        '/tie/x',
        '/elsewhere',
      ]),
    ).toEqual([true, false, false, true, true, true]);
  });

  test('the RFC 9309 section 5.1 example', () => {
    const txt = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot`;
    expect(allowed(txt, ['/example/page.html', '/example/allowed.gif', '/other', '/a.gif'], 'FooBot/1.0')).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(allowed(txt, ['/example/page.html', '/example/other', '/x.gif'], 'bazbot')).toEqual([false, true, true]);
    // quxbot's group is empty: it may crawl everything, the * group does not apply.
    expect(allowed(txt, ['/example/page.html', '/x.gif'], 'quxbot')).toEqual([true, true]);
    // Unknown bots get the * group.
    expect(allowed(txt, ['/example/x', '/x.gif', '/x.gif?y', '/publications/a'], UA)).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  test('wildcards and the end anchor', () => {
    const txt = `User-agent: *
Disallow: /*.php$
Disallow: /fish*
Disallow: /*/secret/
Disallow: /exact$
Disallow: /a*b*c
Allow: /fish/ok`;
    expect(
      allowed(txt, [
        '/index.php',
        '/index.php?x=1',
        '/fish',
        '/fishheads/x',
        '/Fish',
        '/fish/ok',
        '/a/secret/b',
        '/secret/',
        '/exact',
        '/exact/more',
        '/aXbYc',
        '/aXcYb',
      ]),
    ).toEqual([false, true, false, false, true, true, false, true, false, true, false, true]);
  });

  test('many wildcards on a long path are matched without backtracking', () => {
    const txt = `User-agent: *\nDisallow: /${'*a'.repeat(200)}$\nDisallow: /x$y\nDisallow: /end$`;
    expect(allowed(txt, [`/${'a'.repeat(5000)}b`, `/${'a'.repeat(5000)}`, '/x$y', '/x', '/end', '/ends'])).toEqual([
      true,
      false,
      false, // a $ that is not last is literal
      true,
      false,
      true,
    ]);
  });

  test('percent-encoding normalisation, on patterns and paths alike', () => {
    const txt =
      'User-agent: *\nDisallow: /foo/ツ\nDisallow: /%62ar\nDisallow: /a%2fb\nDisallow: /%e3%83%84x\nDisallow: /p|q';
    expect(
      allowed(txt, [
        '/foo/%E3%83%84',
        '/foo/%e3%83%84x',
        '/foo/ツ',
        '/bar',
        '/%62ar',
        '/a%2Fb',
        '/a/b',
        '/ツx',
        '/p|q',
        '/p%7cq',
        '/baz?q=http://foo.bar',
      ]),
    ).toEqual([false, false, false, false, false, false, true, false, false, false, true]);
  });

  test('empty Disallow allows all; empty file allows all; /robots.txt is always allowed', () => {
    expect(allowed('User-agent: *\nDisallow:', ['/', '/x'])).toEqual([true, true]);
    expect(allowed('', ['/', '/x'])).toEqual([true, true]);
    expect(allowed('User-agent: *\nDisallow: /', ['/', '/x', '/robots.txt'])).toEqual([false, false, true]);
    expect(allowed('User-agent: *\nDisallow: /', ['', 'x'])).toEqual([false, false]);
  });
});

describe('parseRobots groups', () => {
  test('product token selects its group case-insensitively, all its groups merge, * is the fallback', () => {
    const txt = `User-agent: *
Disallow: /all

user-agent: AGENTPLATFORMBOT/2.0
Disallow: /bot-one

User-agent: other
Disallow: /other

User-Agent: agentplatformbot
Disallow: /bot-two
Crawl-delay: 2.5`;
    const robots = parseRobots(txt, UA);
    expect(['/all', '/bot-one', '/bot-two', '/other'].map((p) => robots.isAllowed(p))).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect(robots.crawlDelaySeconds).toBe(2.5);
    expect(allowed(txt, ['/all', '/bot-one'], 'SomeoneElse')).toEqual([false, true]);
  });

  test('no matching group and no * group: nothing applies', () => {
    expect(allowed('User-agent: other\nDisallow: /', ['/x'])).toEqual([true]);
  });

  test('rules before any user-agent are ignored; comments, CRLF, BOM, typos and unknown lines tolerated', () => {
    const txt =
      '\uFEFFDisallow: /orphan\r\n# comment\r\nUser-agent: * # everyone\r\nSitemap: https://x/s.xml\r\n' +
      'User-agent: extra\r\ndissallow: /typo # misspelt\r\nNonsense line\r\nDisallow: /b#c\r\n';
    const robots = parseRobots(txt, UA);
    expect(['/orphan', '/typo', '/b', '/bc'].map((p) => robots.isAllowed(p))).toEqual([true, false, false, false]);
    expect(robots.crawlDelaySeconds).toBeUndefined();
  });

  test('Sitemap lines: resolved against robots.txt, deduplicated, only http(s); they do not split a group', () => {
    const txt =
      '\uFEFFUser-agent: AgentPlatformBot\nSitemap: /sitemap.xml\nUser-agent: other\nDisallow: /both\n' +
      'Sitemap: https://cdn.example.com/maps/a.xml.gz\nsitemap: /sitemap.xml\nSitemap: ftp://x/y.xml\nCrawl-delay: -3';
    const robots = parseRobots(txt, UA, 'https://example.com/robots.txt');
    expect(robots.sitemaps).toEqual(['https://example.com/sitemap.xml', 'https://cdn.example.com/maps/a.xml.gz']);
    // The byte order mark does not hide the first user-agent line, and the Sitemap line does not end its group.
    expect(robots.isAllowed('/both')).toBe(false);
    expect(robots.crawlDelaySeconds).toBeUndefined();
    // Without the file's own address, relative lines cannot be resolved and are left out.
    expect(parseRobots(txt, UA).sitemaps).toEqual(['https://cdn.example.com/maps/a.xml.gz']);
  });

  test('a user-agent line after rules starts a new group', () => {
    const txt = 'User-agent: a\nDisallow: /a\nUser-agent: *\nDisallow: /star';
    expect(allowed(txt, ['/a', '/star'], 'b')).toEqual([true, false]);
    expect(allowed(txt, ['/a', '/star'], 'a')).toEqual([false, true]);
  });
});

describe('robots.txt availability', () => {
  test('2xx parses, 4xx allows all, 429 and 5xx disallow all', () => {
    const txt = 'User-agent: *\nDisallow: /private/';
    expect(robotsForStatus(200, txt, UA).robots.isAllowed('/private/x')).toBe(false);
    expect(robotsForStatus(200, txt, UA).robots.isAllowed('/public')).toBe(true);
    for (const status of [400, 401, 403, 404, 410]) {
      const r = robotsForStatus(status, 'Disallow: /', UA);
      expect([r.status, r.robots.isAllowed('/anything')]).toEqual(['missing', true]);
    }
    for (const status of [429, 500, 502, 503]) {
      const r = robotsForStatus(status, '', UA);
      expect([r.status, r.robots.isAllowed('/anything'), r.robots.isAllowed('/robots.txt')]).toEqual([
        'unreachable',
        false,
        true,
      ]);
    }
  });

  function stubFetch(behaviour: () => SafeResponse | Error): { fetch: SafeFetch; urls: string[] } {
    const urls: string[] = [];
    const fetch: SafeFetch = async (url) => {
      urls.push(url);
      const out = behaviour();
      if (out instanceof Error) throw out;
      return out;
    };
    return { fetch, urls };
  }
  const response = (status: number, body: string): SafeResponse => ({
    status,
    headers: {},
    body: Buffer.from(body),
    url: 'https://example.com/robots.txt',
  });

  test('fetchRobots requests <origin>/robots.txt and maps failures', async () => {
    const ok = stubFetch(() => response(200, 'User-agent: *\nDisallow: /x'));
    const parsed = await fetchRobots(ok.fetch, 'https://example.com', UA, { timeoutMs: 1000 });
    expect(ok.urls).toEqual(['https://example.com/robots.txt']);
    expect([parsed.status, parsed.robots.isAllowed('/x')]).toEqual(['parsed', false]);
    const withMap = stubFetch(() => response(200, 'Sitemap: /map.xml'));
    const mapped = await fetchRobots(withMap.fetch, 'https://example.com', UA, { timeoutMs: 1000 });
    expect(mapped.robots.sitemaps).toEqual(['https://example.com/map.xml']);

    const cases: [Error, string, boolean][] = [
      [new OutboundError('network', 'ECONNREFUSED'), 'unreachable', false],
      [new OutboundError('timeout', 'slow'), 'unreachable', false],
      [new OutboundError('too_large', 'big'), 'unreachable', false],
      [new OutboundError('too_many_redirects', 'loop'), 'missing', true],
      [new OutboundBlockedError('loopback', 'blocked: loopback'), 'blocked', false],
    ];
    for (const [error, status, allowsAll] of cases) {
      const r = await fetchRobots(stubFetch(() => error).fetch, 'https://example.com', UA, { timeoutMs: 1000 });
      expect([error.message, r.status, r.robots.isAllowed('/page')]).toEqual([error.message, status, allowsAll]);
    }
  });

  test('fetchRobots rethrows programmer errors and the caller abort', async () => {
    await expect(
      fetchRobots(stubFetch(() => new TypeError('bug')).fetch, 'https://e.com', UA, { timeoutMs: 1 }),
    ).rejects.toThrow('bug');
    const controller = new AbortController();
    const reason = new Error('cancelled');
    controller.abort(reason);
    const fetch = stubFetch(() => reason).fetch;
    await expect(fetchRobots(fetch, 'https://e.com', UA, { timeoutMs: 1, signal: controller.signal })).rejects.toBe(
      reason,
    );
  });
});
