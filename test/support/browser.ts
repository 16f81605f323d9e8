import { type Server, createServer } from 'node:http';
import { crc32, deflateSync } from 'node:zlib';
import { type Browser, type BrowserContext, type BrowserContextOptions, type Page, chromium } from 'playwright-core';
import { stackInfo } from './stack-info';

/**
 * What the browser tests share: Debian's Chromium (installed by `scripts/setup.sh --test`; playwright-core downloads
 * nothing), a page opened in a profile of its own (signed in to the dashboard or not), an integrator's page on an
 * origin of its own with the widget's script tag, and real images.
 */

/**
 * Headless, and quiet on this machine's closed network: without the background-networking flags Chromium keeps
 * trying to reach Google's services, and those refused connections slow it down.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page in a browser profile of its own, with the uncaught errors of its scripts. */
export interface Opened {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

/** `url` in a new profile of these options (viewport, time zone, locale), its page's errors collected. */
export async function openPage(browser: Browser, url: string, options: BrowserContextOptions): Promise<Opened> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(url);
  return { context, page, errors };
}

/**
 * The dashboard's `address` (a path) in a new profile, signed in as `person` on the sign-in form it shows first; the
 * sign-in is submitted, not waited for (the address opens after it).
 */
export async function signIn(
  browser: Browser,
  person: { email: string; password: string },
  address: string,
  options: BrowserContextOptions,
): Promise<Opened> {
  const opened = await openPage(browser, `${stackInfo().apiUrl}${address}`, options);
  const { page } = opened;
  await page.getByLabel('E-mail').fill(person.email);
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return opened;
}

export interface ShopPage {
  /** `http://127.0.0.1:<port>`: another port is another origin than the API's. */
  origin: string;
  close(): Promise<void>;
}

/**
 * The integrator's site: a page with the widget's script tag (`?key=pk_…`; `&open=1` adds `data-open`, `&user=` a
 * `data-user-token`), optionally with styles of its own that must not reach the widget.
 */
export async function startShopPage(opts: { css?: string } = {}): Promise<ShopPage> {
  const server: Server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const attrs = [
      `src="${stackInfo().apiUrl}/widget.js"`,
      `data-key="${q.get('key') ?? ''}"`,
      ...(q.get('open') ? ['data-open="true"'] : []),
      ...(q.get('user') ? [`data-user-token="${q.get('user')}"`] : []),
    ];
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title>${opts.css ? `<style>${opts.css}</style>` : ''}</head>
<body${opts.css ? '' : ' style="font-family: sans-serif; margin: 40px"'}><h1>Acme shop</h1>
<p>Handmade things, shipped worldwide.</p><button>Buy now</button>
<script ${attrs.join(' ')} async></script></body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A real PNG (a gradient), built here: signature, IHDR, one zlib-compressed IDAT, IEND. */
export function makePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, no interlace
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++)
      rows.set([Math.round((x / width) * 255), 110, Math.round((y / height) * 255)], row + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
