import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AppState } from '../../api/context';
import { createDashboardPages, pageNotFound } from '../../api/pages';

/** The API's serving of the built dashboard app (api/pages.ts), over a build folder of the test's own. */
let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dashboard-dist-'));
  const pages = createDashboardPages(dir);
  const app = new Koa<AppState>();
  app.use(pageNotFound(pages));
  app.use(async (ctx) => {
    if (ctx.path === '/connect' || ctx.path === '/v1/none' || ctx.path === '/settings') {
      if (ctx.path === '/connect') await pages.page(ctx);
      return; // a route that is not there: 404, no body
    }
    if (ctx.path.startsWith('/app/assets/')) {
      if (!(await pages.asset(ctx, ctx.path.slice('/app/assets/'.length)))) ctx.status = 404;
    } else {
      await pages.page(ctx);
    }
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('dashboard pages', () => {
  it('without a build, a page is a plain-text 503 saying to run the setup', async () => {
    const res = await fetch(`${base}/connect`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toMatch(/not built[\s\S]*scripts\/setup\.sh/);
  });

  it('once built, the page is index.html, read again when a rebuild changes it', async () => {
    mkdirSync(path.join(dir, 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><p>first</p>');
    writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    const first = await fetch(`${base}/connect`);
    expect([first.status, await first.text()]).toEqual([200, '<!doctype html><p>first</p>']);
    // A later build (a later modification time) is served without a restart.
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><p>second</p>');
    expect(await (await fetch(`${base}/connect`)).text()).toBe('<!doctype html><p>second</p>');

    const asset = await fetch(`${base}/app/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    for (const name of ['index.html', '..%2Findex.html', 'index-abc123.map', '.hidden.js']) {
      expect([name, (await fetch(`${base}/app/assets/${name}`)).status]).toEqual([name, 404]);
    }
  });

  it("a browser on a path that is no page gets the app (which says the page is not found) with 404; programs get JSON's 404", async () => {
    const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const page = await fetch(`${base}/settings`, { headers: { Accept: browser } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toBe('<!doctype html><p>second</p>');
    // A program (any Accept, none, or JSON), anything under /v1/, and anything but GET and HEAD: left to the API's 404.
    for (const [url, init] of [
      ['/settings', {}],
      ['/settings', { headers: { Accept: '*/*' } }],
      ['/settings', { headers: { Accept: 'application/json' } }],
      ['/v1/none', { headers: { Accept: browser } }],
      ['/settings', { method: 'POST', headers: { Accept: browser } }],
    ] as const) {
      const res = await fetch(`${base}${url}`, init);
      expect([url, res.status, await res.text()]).toEqual([url, 404, 'Not Found']);
    }
  });
});
