import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { AppContext, AppMiddleware } from './context';

/**
 * The dashboard's pages: a Vite + Preact app in `web/dashboard/`, built by `scripts/setup.sh` into
 * `web/dashboard/dist/` (never committed). Every page path answers the app's `index.html` (the app reads the path);
 * its assets, whose names carry a hash of their content, are served under `/app/assets/` and cached for a year.
 */
const DASHBOARD_DIST = path.join(__dirname, '..', 'web', 'dashboard', 'dist');
/** Where Vite's `base` puts the assets (web/dashboard/vite.config.ts). */
export const ASSET_PREFIX = '/app/assets/';
/**
 * The pages the dashboard app draws (it routes on the path); each answers the same `index.html`. `{x}` segments are
 * ids or tab names the app reads.
 */
export const DASHBOARD_PAGES = [
  '/',
  '/signin',
  '/signup',
  '/reset-password',
  '/invite',
  '/verify-email',
  '/connect',
  '/agents',
  '/agents/{id}',
  '/agents/{id}/{tab}',
  '/inbox',
  '/notifications',
  '/billing',
  '/team',
  '/account',
  '/builder',
] as const;

const NOT_BUILT =
  'The dashboard pages are not built.\n\n' +
  'Run `bash scripts/setup.sh` (npm start and npm test run it): it builds web/dashboard into web/dashboard/dist.\n';

/**
 * The pages load only what the API serves: no inline script, no other origin, never in a frame (an approve button
 * under someone else's page is the classic trap), and no referrer (the pairing code is in the address).
 */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * The API reference (`/docs`) under the same rules, but for styles: the Scalar bundle (served by the API itself)
 * injects its stylesheets at run time, which `style-src 'self'` would refuse. Scripts stay our own files only.
 */
export const DOCS_HEADERS = {
  ...PAGE_HEADERS,
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
    "object-src 'none'",
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

export interface Loaded {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/** A file read once with its gzip form and a strong ETag of its content. */
export async function load(file: string): Promise<Loaded> {
  const body = await readFile(file);
  return {
    body,
    gzip: await promisify(gzip)(body),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

/** Answers a loaded file: 304 when the client's copy is current, gzip when accepted. */
export function send(ctx: AppContext, loaded: Loaded, type: string, cacheControl: string): void {
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.etag = loaded.etag;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = loaded.gzip;
  } else {
    ctx.body = loaded.body;
  }
}

/** The built app in `distDir` (DASHBOARD_DIST; tests point it elsewhere). */
export function createDashboardPages(distDir: string = DASHBOARD_DIST) {
  /** index.html is read again when the build changes it (a rebuild while the API runs); assets never change. */
  let index: { mtimeMs: number; loaded: Loaded } | undefined;
  const assets = new Map<string, Promise<Loaded>>();

  return {
    /** Answers a dashboard page: the app's index.html, revalidated on every visit; 503 in plain text when not built. */
    async page(ctx: AppContext): Promise<void> {
      const file = path.join(distDir, 'index.html');
      const info = await stat(file).catch(() => undefined);
      if (!info) {
        ctx.status = 503;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.set('Cache-Control', 'no-store');
        ctx.body = NOT_BUILT;
        return;
      }
      if (!index || index.mtimeMs !== info.mtimeMs) index = { mtimeMs: info.mtimeMs, loaded: await load(file) };
      for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
      send(ctx, index.loaded, 'text/html; charset=utf-8', 'no-cache');
    },

    /**
     * Answers one built asset by its file name (Vite puts a content hash in it, so it is cached as immutable); false
     * for a name that is not a plain file name of a known type, or not in the build.
     */
    async asset(ctx: AppContext, name: string): Promise<boolean> {
      const type = TYPES[path.extname(name)];
      if (!type || !/^[\w.-]+$/.test(name) || name.startsWith('.')) return false;
      let pending = assets.get(name);
      if (!pending) {
        pending = load(path.join(distDir, 'assets', name));
        assets.set(name, pending);
        // A missing file is not remembered: the build may land after this request.
        pending.catch(() => assets.delete(name));
      }
      const loaded = await pending.catch(() => undefined);
      if (!loaded) return false;
      ctx.set('X-Content-Type-Options', 'nosniff');
      send(ctx, loaded, type, 'public, max-age=31536000, immutable');
      return true;
    },
  };
}

export type DashboardPages = ReturnType<typeof createDashboardPages>;

/**
 * A person who follows a wrong or old link to the dashboard (`/agent`, `/settings`) gets the app's "Page not found"
 * (status 404, the app draws it from the path), not the API's JSON. Only for a browser asking for a page: a GET that
 * prefers HTML to JSON, outside `/v1/`. Programs — curl, fetch, every client of the API — keep the contract's
 * `404 not_found` body.
 */
export function pageNotFound(pages: DashboardPages): AppMiddleware {
  return async function pageNotFoundMiddleware(ctx, next) {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path.startsWith('/v1/')) return;
    if (ctx.accepts('json', 'html') !== 'html') return;
    await pages.page(ctx);
    if ((ctx.status as number) === 200) ctx.status = 404; // a build that is missing stays its 503
  };
}
