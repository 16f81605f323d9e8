import { createHash } from 'node:crypto';

/**
 * What makes two URLs, two sites or two pages the same, for the crawler (lib/crawl/crawler.ts).
 *
 * URL identity (see normalizeUrl): scheme and host lower-cased, default port dropped, fragment dropped, dot segments
 * resolved, a bare `?` dropped; path case, query and trailing slashes are kept as they are, and `/index.html` is not
 * folded into `/`. Pages that are the same under two URLs are caught by the content hash instead (`duplicate`).
 */

/** Normalised absolute http(s) URL (see the module comment), or undefined for anything else. */
export function normalizeUrl(raw: string, base?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined; // SafeFetch refuses these anyway
  url.hash = '';
  if (url.search === '') url.search = ''; // drops a bare '?'
  return url.href;
}

/** Site identity: scheme, host without a leading `www.`, port. */
export function siteKey(url: string): string {
  const u = new URL(url);
  const host = u.hostname.startsWith('www.') ? u.hostname.slice(4) : u.hostname;
  return `${u.protocol}//${host}:${u.port}`;
}

export function contentHash(text: string): string {
  return createHash('sha256').update(text.toLowerCase().replace(/\s+/g, ' ').trim()).digest('hex');
}
