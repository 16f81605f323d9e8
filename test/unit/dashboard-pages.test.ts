import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AppState } from '../../api/context';
import { createDashboardPages } from '../../api/pages';

/** The API's serving of the built dashboard app (api/pages.ts), over a build folder of the test's own. */
let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dashboard-dist-'));
  const pages = createDashboardPages(dir);
  const app = new Koa<AppState>();
  app.use(async (ctx) => {
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
});
