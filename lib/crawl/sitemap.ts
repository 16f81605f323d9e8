import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

import { XMLParser } from 'fast-xml-parser';

import { OutboundBlockedError, OutboundError, type SafeFetch } from '../http/safe-fetch';

/**
 * Sitemaps (sitemaps.org protocol) read for a site scan (docs/decisions/151-sitemaps-and-path-patterns.md): a `<urlset>`
 * gives page addresses, a `<sitemapindex>` more sitemaps. Files are read breadth first, each through the SSRF-safe
 * client, gunzipped when they are gzip (by their bytes, whatever the name or type says), and parsed by fast-xml-parser
 * (its entity expansion bounded). Bounded: at most `maxFiles` files of `maxBytes` each, and `maxUrls` addresses.
 *
 * Never throws for what a site serves (a missing, broken or oversized sitemap is skipped, with its reason); throws the
 * caller's abort reason and what `allowed` or `onFile` throw.
 */

const gunzipAsync = promisify(gunzip);

export interface SitemapOptions {
  fetch: SafeFetch;
  userAgent: string;
  timeoutMs: number;
  maxFiles: number;
  maxBytes: number;
  maxUrls: number;
  /** Whether a sitemap file may be requested (same site, robots.txt); normalized absolute URL or undefined. */
  allowedFile: (url: string) => Promise<string | undefined>;
  /** Whether a listed page is taken (same site, path patterns); normalized absolute URL or undefined. */
  allowedPage: (url: string) => string | undefined;
  /** Called after each file read (or skipped), for heartbeats. */
  onFile?: (url: string) => void | Promise<void>;
  signal?: AbortSignal;
}

export interface SitemapResult {
  /** Page addresses in the order the sitemaps list them, deduplicated, at most maxUrls. */
  urls: string[];
  /** Sitemap files requested. */
  files: number;
  /** Files that gave nothing, with why (`http_404`, `not_xml`, `too_large`, `robots`, …). */
  skipped: { url: string; reason: string }[];
}

const parser = new XMLParser({
  ignoreAttributes: true,
  // `<sm:loc>` and `<loc>` alike.
  removeNSPrefix: true,
  isArray: (name) => name === 'url' || name === 'sitemap',
  // Only the predefined entities are needed (`&amp;` in addresses); DOCTYPE entities stay bounded.
  processEntities: { enabled: true, maxEntityCount: 20, maxExpandedLength: 10_000 },
  parseTagValue: false,
  trimValues: true,
});

type Entry = { loc?: unknown };

function locs(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  return entries
    .map((e: Entry) => (typeof e === 'object' && e !== null ? e.loc : undefined))
    .filter((loc): loc is string => typeof loc === 'string' && loc.length > 0);
}

/** What one sitemap file lists, or why it gives nothing. */
export function parseSitemap(xml: string): { pages: string[]; sitemaps: string[] } | { error: string } {
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(xml) as Record<string, unknown>;
  } catch {
    return { error: 'not_xml' };
  }
  const urlset = doc.urlset as { url?: unknown } | undefined;
  const index = doc.sitemapindex as { sitemap?: unknown } | undefined;
  if (urlset !== undefined) return { pages: locs(urlset?.url), sitemaps: [] };
  if (index !== undefined) return { pages: [], sitemaps: locs(index?.sitemap) };
  return { error: 'not_sitemap' };
}

/** The file's text: gunzipped when it is gzip (by its magic bytes: `.xml.gz` files come under many types). */
async function bodyText(body: Buffer, maxBytes: number): Promise<string | { error: string }> {
  if (body[0] !== 0x1f || body[1] !== 0x8b) return body.toString('utf8');
  try {
    return (await gunzipAsync(body, { maxOutputLength: maxBytes })).toString('utf8');
  } catch (err) {
    return { error: (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' : 'bad_gzip' };
  }
}

export async function readSitemaps(roots: string[], opts: SitemapOptions): Promise<SitemapResult> {
  const urls: string[] = [];
  const seenPages = new Set<string>();
  const skipped: SitemapResult['skipped'] = [];
  const queue = [...new Set(roots)];
  const seenFiles = new Set(queue);
  let files = 0;

  for (let i = 0; i < queue.length && files < opts.maxFiles && urls.length < opts.maxUrls; i++) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const listed = queue[i];
    const url = await opts.allowedFile(listed);
    if (!url) {
      skipped.push({ url: listed, reason: 'robots' });
      continue;
    }
    files++;
    let parsed: ReturnType<typeof parseSitemap>;
    try {
      const res = await opts.fetch(url, {
        headers: { 'user-agent': opts.userAgent, accept: 'application/xml, text/xml;q=0.9, */*;q=0.1' },
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxBytes,
        signal: opts.signal,
      });
      const text = res.status >= 200 && res.status < 300 ? await bodyText(res.body, opts.maxBytes) : undefined;
      if (text === undefined) parsed = { error: `http_${res.status}` };
      else parsed = typeof text === 'string' ? parseSitemap(text) : text;
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (err instanceof OutboundBlockedError) parsed = { error: 'blocked' };
      else if (err instanceof OutboundError) parsed = { error: err.code };
      else throw err;
    }
    if ('error' in parsed) skipped.push({ url, reason: parsed.error });
    else {
      for (const page of parsed.pages) {
        const taken = opts.allowedPage(page);
        if (!taken || seenPages.has(taken)) continue;
        seenPages.add(taken);
        urls.push(taken);
        if (urls.length >= opts.maxUrls) break;
      }
      for (const sitemap of parsed.sitemaps) {
        if (!seenFiles.has(sitemap)) {
          seenFiles.add(sitemap);
          queue.push(sitemap);
        }
      }
    }
    if (opts.onFile) await opts.onFile(url);
  }
  return { urls, files, skipped };
}
