import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

/**
 * Fake website for crawler tests: a real HTTP server on 127.0.0.1 serving a small company site with the traps a
 * crawler meets in the wild. Every page carries the same header/nav/aside/footer chrome and a script; the facts live
 * only in each page's main content, so tests can check both that facts were found and that chrome was dropped.
 *
 * In-process:   const site = await startFakeSite();  // site.url === 'http://127.0.0.1:<port>/'
 * As a process: node --import tsx test/support/fake-site.ts [--port N]
 *               prints one JSON line {"url":"http://127.0.0.1:<port>/","port":<port>}; SIGTERM stops it.
 *
 * Map (depth from /):
 *   /                      home (0): intro text, links to everything below
 *   /about                 (1) company history; has <base href="/about/"> and a relative link to mascot
 *   /about/mascot          (2) MASCOT_FACT
 *   /pages/1../pages/10    (1) "The secret code of page N is WORD-N."; page N links page N+10
 *   /pages/11../pages/20   (2)
 *   /pages/21../pages/30   (3)
 *   /ja                    (1) Japanese, UTF-8 declared only by <meta charset>
 *   /ru                    (1) Russian, windows-1251 declared in Content-Type
 *   /old-page              301 → /new-page (linked nowhere else)
 *   /staff                 302 → /private/secret (robots.txt disallows the target: must not be followed)
 *   /partner               302 → the other site (off the site: must not be followed)
 *   /dup-a, /dup-b         identical content
 *   /file.pdf              application/pdf
 *   /huge                  text/html over 2 MiB
 *   /hang                  never answers (close() cleans it up)
 *   /missing               404
 *   /empty                 only header/nav/footer, no main text
 *   /private/*             disallowed by robots.txt, linked from every page; PRIVATE_FACT; must never be requested
 *   /nofollow-target       linked only with rel=nofollow; must never be requested
 *   /guides/*, /blog/*     SITEMAP_ONLY_FACTS: linked from nowhere, found only through a sitemap
 *   sitemaps               none unless `sitemaps` serves some (e.g. /sitemap.xml); robots.txt names /sitemap.xml
 *   external links         http://localhost:<port2>/… and http://127.0.0.1:<port2>/… (another site on a second
 *                          server, recorded in externalHits); must never be requested
 */

export interface FakeSiteOptions {
  /** Status for /robots.txt (default 200 with ROBOTS_TXT); e.g. 404 (no robots: all allowed) or 503 (crawl nothing). */
  robotsStatus?: number;
  /** Body of /robots.txt when robotsStatus is 200. */
  robotsTxt?: string;
  /**
   * Sitemap files by path (e.g. `/sitemap.xml`), or functions of the site's URL giving them: a Buffer starting with
   * gzip's magic bytes is served as application/gzip, anything else as application/xml. Paths not listed answer 404
   * (the default site has none).
   */
  sitemaps?: Record<string, string | Buffer | ((siteUrl: string) => string | Buffer)>;
  port?: number;
}

export interface FakeSite {
  /** Home page, with trailing slash. */
  url: string;
  port: number;
  /** Path and query of every request the site received, in order (robots.txt included). */
  hits: string[];
  /** Base URL of the "other site" the fake site links to. */
  externalUrl: string;
  /** Requests the other site received (a correct crawler leaves this empty). */
  externalHits: string[];
  close(): Promise<void>;
}

export const PAGE_COUNT = 30;
const WORDS = [
  'ALPACA', 'BADGER', 'CAMEL', 'DINGO', 'EAGLE', 'FERRET', 'GECKO', 'HERON', 'IBIS', 'JACKAL',
  'KOALA', 'LEMUR', 'MARMOT', 'NEWT', 'OCELOT', 'PANDA', 'QUOKKA', 'RAVEN', 'SALMON', 'TAPIR',
  'URIAL', 'VIPER', 'WALRUS', 'XERUS', 'YAK', 'ZEBRA', 'AARDVARK', 'BISON', 'COBRA', 'DOLPHIN',
]; // prettier-ignore

export function pageFact(n: number): string {
  return `The secret code of page ${n} is ${WORDS[n - 1]}-${n}.`;
}

export const MASCOT_FACT = 'The company mascot is a purple axolotl named Quentin.';
export const ABOUT_FACT = 'Acme Widgets was founded in 1987 in a garage in Tallinn.';
export const JAPANESE_FACT = '当社の秘密の合言葉は「桜餅と抹茶」です。';
export const RUSSIAN_FACT = 'Секретный пароль склада — «северное сияние».';
export const NEW_PAGE_FACT = 'The relocated page confirms that the support desk moved to Lisbon.';
export const DUPLICATE_FACT = 'The warehouse opens at seven in the morning on weekdays.';
export const HOME_FACT = 'Acme Widgets builds reliable widgets for small workshops.';
/** Only on /private/* pages, which robots.txt disallows: must never show up in crawled text. */
export const PRIVATE_FACT = 'The private vault combination is 4-8-15-16-23-42.';
/** Text from the chrome of every page (header, nav, aside, footer, script, hidden): must never be extracted. */
export const BOILERPLATE_MARKERS = [
  'Quality widgets since 1987',
  'Main menu',
  'Sign up for our newsletter',
  'All rights reserved',
  'SCRIPT-SHOULD-NOT-APPEAR',
  'Cookie consent hidden',
];

/** Pages linked from nowhere: only a sitemap leads to them. */
export const SITEMAP_ONLY_FACTS: readonly { path: string; fact: string }[] = [
  { path: '/guides/setup', fact: 'The setup guide says to calibrate the widget press at 40 bar.' },
  { path: '/guides/billing', fact: 'Invoices are sent on the third working day of each month.' },
  { path: '/blog/launch', fact: 'The spring launch introduced the titanium widget line.' },
  { path: '/blog/2024/recall', fact: 'The 2024 recall concerned widgets with serial numbers below 5000.' },
];

/** A `<urlset>` sitemap listing `paths` on `base` (absolute addresses are kept as they are). */
export function urlsetXml(base: string, paths: string[]): string {
  const urls = paths.map((p) => `  <url><loc>${escapeXml(new URL(p, base).href)}</loc><priority>0.5</priority></url>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.join('\n')}
</urlset>
`;
}

/** A `<sitemapindex>` listing the sitemaps at `paths` on `base`. */
export function sitemapIndexXml(base: string, paths: string[]): string {
  const maps = paths.map((p) => `  <sitemap><loc>${escapeXml(new URL(p, base).href)}</loc></sitemap>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${maps.join('\n')}
</sitemapindex>
`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface ExpectedFact {
  /** Path of the page (after redirects) whose text holds the fact. */
  path: string;
  fact: string;
  /** Link depth from the home page. */
  depth: number;
}

/** Every fact a complete crawl indexes, one per indexable page (the duplicate pair counts once, as /dup-a). */
export const FAKE_SITE_FACTS: readonly ExpectedFact[] = [
  { path: '/', fact: HOME_FACT, depth: 0 },
  { path: '/about', fact: ABOUT_FACT, depth: 1 },
  { path: '/about/mascot', fact: MASCOT_FACT, depth: 2 },
  ...Array.from({ length: PAGE_COUNT }, (_, i) => ({
    path: `/pages/${i + 1}`,
    fact: pageFact(i + 1),
    depth: i < 10 ? 1 : i < 20 ? 2 : 3,
  })),
  { path: '/ja', fact: JAPANESE_FACT, depth: 1 },
  { path: '/ru', fact: RUSSIAN_FACT, depth: 1 },
  { path: '/new-page', fact: NEW_PAGE_FACT, depth: 1 },
  { path: '/dup-a', fact: DUPLICATE_FACT, depth: 1 },
];

export const ROBOTS_TXT = `# Acme Widgets
User-agent: *
Disallow: /private/
Disallow: /*.bak$
Allow: /private/press-kit$

User-agent: EvilScraper
Disallow: /

Sitemap: /sitemap.xml
`;

const HUGE_BYTES = 2.5 * 1024 * 1024;

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function layout(
  title: string,
  main: string | undefined,
  opts: { lang?: string; head?: string; externalUrl: string; charset?: string },
): string {
  return `<!doctype html>
<html lang="${opts.lang ?? 'en'}">
<head>
  ${opts.charset ? `<meta charset="${opts.charset}">` : ''}
  <title>${escapeHtml(title)} | Acme Widgets</title>
  ${opts.head ?? ''}
  <style>body { font-family: sans-serif } .x::after { content: "STYLE" }</style>
  <script>var tracking = "SCRIPT-SHOULD-NOT-APPEAR"; document.title += "";</script>
</head>
<body>
  <div class="cookie" hidden>Cookie consent hidden</div>
  <header class="site-header">
    <a href="/"><img src="/logo.png" alt="Acme"> Acme Widgets</a>
    <p class="tagline">Quality widgets since 1987</p>
  </header>
  <nav aria-label="Main menu">
    <span>Main menu</span>
    <ul>
      <li><a href="/">Home</a></li>
      <li><a href="/about#history">About us</a></li>
      <li><a href="/pages/1">Products</a></li>
      <li><a href="/private/secret">Staff area</a></li>
    </ul>
  </nav>
  ${main === undefined ? '' : `<main id="content">\n${main}\n  </main>`}
  <aside>
    <h2>Newsletter</h2>
    <form action="/subscribe" method="post">Sign up for our newsletter <input name="email"><button>Go</button></form>
  </aside>
  <footer>
    <p>&copy; 2024 Acme Widgets Ltd. All rights reserved.</p>
    <a href="${opts.externalUrl}partners">Our partner</a>
  </footer>
</body>
</html>
`;
}

function homePage(externalUrl: string, otherPort: number): string {
  const pages = Array.from({ length: 10 }, (_, i) => `<li><a href="/pages/${i + 1}">Product ${i + 1}</a></li>`);
  return layout(
    'Home',
    `    <h1>Welcome to Acme Widgets</h1>
    <p>${HOME_FACT} Browse our <a href="/about">company story</a> or the catalogue below.</p>
    <h2>Catalogue</h2>
    <ul>${pages.join('')}</ul>
    <h2>More</h2>
    <ul>
      <li><a href="/ja">日本語のページ</a></li>
      <li><a href="/ru">Русская страница</a></li>
      <li><a href="/old-page">Support desk (old address)</a></li>
      <li><a href="/staff">Staff portal</a> and <a href="/partner">our partner</a></li>
      <li><a href="/dup-a">Warehouse hours</a> and <a href="/dup-b">again</a></li>
      <li><a href="/file.pdf">Brochure (PDF)</a></li>
      <li><a href="/empty">Site map</a></li>
      <li><a href="/missing">Discontinued product</a></li>
      <li><a href="/private/payroll">Payroll</a></li>
      <li><a href="/nofollow-target" rel="nofollow">Login</a></li>
      <li><a href="http://127.0.0.1:${otherPort}/other-port">Other port</a></li>
      <li><a href="/huge">Full archive</a></li>
      <li><a href="/hang">Live status</a></li>
      <li><a href="mailto:info@example.com">Mail us</a> &amp; <a href="javascript:void(0)">chat</a></li>
    </ul>`,
    { externalUrl, charset: 'utf-8' },
  );
}

function productPage(n: number, externalUrl: string): string {
  const next = n + 10 <= PAGE_COUNT ? `<p>See also <a href="/pages/${n + 10}">product ${n + 10}</a>.</p>` : '';
  return layout(
    `Product ${n}`,
    `    <article>
      <h1>Product ${n}</h1>
      <p>Product ${n} is a widget for workshops.</p>
      <p>${pageFact(n)}</p>
      ${next}
    </article>`,
    { externalUrl },
  );
}

/** windows-1251 for the characters the Russian page uses (Node can decode but not encode legacy charsets). */
function encodeCp1251(s: string): Buffer {
  const bytes: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) bytes.push(cp);
    else if (cp >= 0x410 && cp <= 0x44f) bytes.push(cp - 0x410 + 0xc0);
    else if (cp === 0x401) bytes.push(0xa8);
    else if (cp === 0x451) bytes.push(0xb8);
    else if (cp === 0xab) bytes.push(0xab);
    else if (cp === 0xbb) bytes.push(0xbb);
    else if (cp === 0x2014) bytes.push(0x97);
    else if (cp === 0xa9) bytes.push(0xa9);
    else throw new Error(`encodeCp1251: no mapping for U+${cp.toString(16)}`);
  }
  return Buffer.from(bytes);
}

function listen(handler: http.RequestListener, port: number, sockets: Set<Socket>): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler);
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function closeServer(server: http.Server, sockets: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // The /hang requests never end on their own.
    server.closeAllConnections();
    for (const socket of sockets) socket.destroy();
  });
}

export async function startFakeSite(opts: FakeSiteOptions = {}): Promise<FakeSite> {
  const hits: string[] = [];
  const externalHits: string[] = [];
  const sockets = new Set<Socket>();

  const external = await listen(
    (req, res) => {
      externalHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<main><p>Another site entirely.</p></main>');
    },
    0,
    sockets,
  );
  const externalPort = (external.address() as AddressInfo).port;
  // Another host name for the same machine: a different site as far as the crawler can tell.
  const externalUrl = `http://localhost:${externalPort}/`;

  const send = (res: http.ServerResponse, status: number, body: string | Buffer, type = 'text/html; charset=utf-8') => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  let port = 0;
  const handler: http.RequestListener = (req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    const pathname = new URL(url, 'http://site.test').pathname;
    const page = /^\/pages\/(\d+)$/.exec(pathname);

    if (pathname === '/robots.txt') {
      const status = opts.robotsStatus ?? 200;
      return send(res, status, status === 200 ? (opts.robotsTxt ?? ROBOTS_TXT) : 'no robots here', 'text/plain');
    }
    if (pathname === '/') return send(res, 200, homePage(externalUrl, externalPort));
    const sitemapOf = opts.sitemaps?.[pathname];
    if (sitemapOf !== undefined) {
      const sitemap = typeof sitemapOf === 'function' ? sitemapOf(`http://127.0.0.1:${port}/`) : sitemapOf;
      const gzip = Buffer.isBuffer(sitemap) && sitemap[0] === 0x1f && sitemap[1] === 0x8b;
      return send(res, 200, sitemap, gzip ? 'application/gzip' : 'application/xml; charset=utf-8');
    }
    const orphan = SITEMAP_ONLY_FACTS.find((f) => f.path === pathname);
    if (orphan) {
      const heading = pathname.split('/').pop()!;
      return send(
        res,
        200,
        layout(heading, `    <article>\n      <h1>${heading}</h1>\n      <p>${orphan.fact}</p>\n    </article>`, {
          externalUrl,
        }),
      );
    }
    if (page && Number(page[1]) >= 1 && Number(page[1]) <= PAGE_COUNT) {
      return send(res, 200, productPage(Number(page[1]), externalUrl));
    }
    switch (pathname) {
      case '/about':
        return send(
          res,
          200,
          layout(
            'About us',
            `    <h1 id="history">Our history</h1>
    <p>${ABOUT_FACT}</p>
    <p>Meet <a href="mascot">our mascot</a> &amp; the team. Caf&eacute; talk: &quot;widgets&quot; &lt;3</p>`,
            { externalUrl, head: '<base href="/about/">' },
          ),
        );
      case '/about/mascot':
        return send(
          res,
          200,
          layout('Our mascot', `    <h1>Our mascot</h1>\n    <p>${MASCOT_FACT}</p>\n    <p>He likes shrimp.</p>`, {
            externalUrl,
          }),
        );
      case '/ja':
        // No charset in Content-Type: the crawler has to find <meta charset>.
        return send(
          res,
          200,
          layout('会社案内', `    <h1>会社案内</h1>\n    <p>${JAPANESE_FACT}</p>`, {
            externalUrl,
            lang: 'ja',
            charset: 'utf-8',
          }),
          'text/html',
        );
      case '/ru':
        return send(
          res,
          200,
          encodeCp1251(
            layout('О компании', `    <h1>О компании</h1>\n    <p>${RUSSIAN_FACT}</p>`, { externalUrl, lang: 'ru' }),
          ),
          'text/html; charset=windows-1251',
        );
      case '/old-page':
        res.writeHead(301, { location: '/new-page', 'content-length': 0 }).end();
        return;
      case '/staff':
        res.writeHead(302, { location: '/private/secret', 'content-length': 0 }).end();
        return;
      case '/partner':
        res.writeHead(302, { location: `${externalUrl}landing`, 'content-length': 0 }).end();
        return;
      case '/new-page':
        return send(
          res,
          200,
          layout('Support desk', `    <h1>Support desk</h1>\n    <p>${NEW_PAGE_FACT}</p>`, { externalUrl }),
        );
      case '/dup-a':
      case '/dup-b':
        return send(
          res,
          200,
          layout('Warehouse', `    <h1>Warehouse hours</h1>\n    <p>${DUPLICATE_FACT}</p>`, { externalUrl }),
        );
      case '/file.pdf':
        return send(
          res,
          200,
          Buffer.from('%PDF-1.4\n%\xE2\xE3\xCF\xD3\n1 0 obj\n<<>>\nendobj\n%%EOF\n', 'latin1'),
          'application/pdf',
        );
      case '/huge': {
        const paragraph = `<p>${'Archive entry with plenty of words to fill the page. '.repeat(20)}</p>\n`;
        const main = paragraph.repeat(Math.ceil(HUGE_BYTES / paragraph.length));
        return send(res, 200, layout('Archive', main, { externalUrl }));
      }
      case '/hang':
        return; // never answers; close() destroys the socket
      case '/empty':
        return send(res, 200, layout('Site map', undefined, { externalUrl }));
      case '/private/secret':
      case '/private/payroll':
        return send(res, 200, layout('Private', `    <p>${PRIVATE_FACT}</p>`, { externalUrl }));
      case '/nofollow-target':
        return send(res, 200, layout('Login', '    <p>Login page that should not be crawled.</p>', { externalUrl }));
      default:
        return send(
          res,
          404,
          layout('Not found', '    <h1>Not found</h1>\n    <p>This page does not exist.</p>', { externalUrl }),
        );
    }
  };

  let site: http.Server;
  try {
    site = await listen(handler, opts.port ?? 0, sockets);
  } catch (err) {
    await closeServer(external, sockets);
    throw err;
  }
  port = (site.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    hits,
    externalUrl,
    externalHits,
    close: () => Promise.all([closeServer(site, sockets), closeServer(external, sockets)]).then(() => undefined),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Standalone process

if (require.main === module || path.resolve(process.argv[1] ?? '') === __filename) {
  const arg = process.argv.slice(2).join('=');
  const match = /--port=(\d+)/.exec(arg);
  startFakeSite({ port: match ? Number(match[1]) : 0 })
    .then((site) => {
      process.stdout.write(JSON.stringify({ url: site.url, port: site.port }) + '\n');
      const stop = () => void site.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    })
    .catch((err: unknown) => {
      process.stderr.write(`fake-site: ${String(err)}\n`);
      process.exit(1);
    });
}
