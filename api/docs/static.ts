import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { AppContext } from '../context';

/**
 * The files behind `/docs/assets/{name}`: our stylesheet and start-up script (next to this file, in `assets/`) and
 * the Scalar API reference browser bundle, served from the installed `@scalar/api-reference` package, so the page
 * needs nothing beyond the API. Only the names below are served; anything else is the route's 404.
 */

/** `@scalar/api-reference` does not export `./package.json`, so resolve its entry point and walk up to the package. */
function packageDir(name: string): string {
  for (let dir = path.dirname(require.resolve(name)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === name) return dir;
    if (path.dirname(dir) === dir) throw new Error(`Cannot find the directory of the package ${name}`);
  }
}

const SCALAR_DIR = packageDir('@scalar/api-reference');
/** The standalone (IIFE) build: one file, its CSS injected by itself, no chunks loaded at run time. */
const SCALAR_BUNDLE = path.join(SCALAR_DIR, 'dist/browser/standalone.js');
// Resolved when the module loads, so a missing or reshaped package fails at start-up, not on the first reader.
if (!existsSync(SCALAR_BUNDLE)) throw new Error(`Scalar browser bundle not found at ${SCALAR_BUNDLE}`);

interface Source {
  file: string;
  type: string;
  /** Seconds a browser may reuse its copy; after that it revalidates with the ETag (304). */
  maxAge: number;
  transform?: (text: string) => string;
}

const JS = 'text/javascript; charset=utf-8';
const SOURCES = new Map<string, Source>([
  ['docs.css', { file: path.join(__dirname, 'assets/docs.css'), type: 'text/css; charset=utf-8', maxAge: 3600 }],
  ['docs.js', { file: path.join(__dirname, 'assets/docs.js'), type: JS, maxAge: 3600 }],
  [
    'scalar.js',
    {
      file: SCALAR_BUNDLE,
      type: JS,
      maxAge: 86_400,
      // The source map (17 MB) is not served; drop the comment so browser dev tools do not ask for it.
      transform: (text) => text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'),
    },
  ],
]);

interface Asset {
  type: string;
  cacheControl: string;
  etag: string;
  body: Buffer;
  gzip: Buffer;
}

/**
 * Read, hashed and compressed once, on first request (the Scalar bundle is 4 MB, about 1.3 MB gzipped); gzip runs
 * off the event loop. A failed read is not cached, so the next request tries again.
 */
const cache = new Map<string, Promise<Asset>>();

async function build(source: Source): Promise<Asset> {
  const raw = await readFile(source.file, 'utf8');
  const body = Buffer.from(source.transform ? source.transform(raw) : raw, 'utf8');
  return {
    type: source.type,
    cacheControl: `public, max-age=${source.maxAge}`,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    body,
    gzip: await promisify(gzip)(body),
  };
}

function load(name: string): Promise<Asset> | undefined {
  const source = SOURCES.get(name);
  if (!source) return undefined;
  let pending = cache.get(name);
  if (!pending) {
    pending = build(source);
    cache.set(name, pending);
    pending.catch(() => cache.delete(name));
  }
  return pending;
}

/** Answers `ctx` with the asset called `name` (304 when the client's copy is current); false for unknown names. */
export async function serveDocsAsset(ctx: AppContext, name: string): Promise<boolean> {
  const pending = load(name);
  if (!pending) return false;
  const asset = await pending;
  ctx.status = 200;
  ctx.type = asset.type;
  // As the dashboard's assets: a browser runs or styles these by their declared type only.
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', asset.cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.etag = asset.etag;
  if (ctx.fresh) {
    ctx.status = 304;
    return true;
  }
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
  return true;
}
