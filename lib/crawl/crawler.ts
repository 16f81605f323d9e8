import { createHash } from 'node:crypto';

import { OutboundBlockedError, OutboundError, type SafeFetch, type SafeResponse } from '../http/safe-fetch';
import type { Block } from '../knowledge/document';
import { LIMITS } from '../limits';
import { decodeHtml, extractPage, isHtml } from './extract';
import { hasPatterns, pathAllowed, type PathPatterns } from './patterns';
import { fetchRobots, type RobotsFetchResult } from './robots';
import { readSitemaps } from './sitemap';

/**
 * Site crawler behind POST /v1/admin/scrape: breadth first from the start URL, same site only, robots.txt obeyed,
 * every request through the injected SSRF-safe client, one request at a time.
 *
 * URL identity (see normalizeUrl): scheme and host lower-cased, default port dropped, fragment dropped, dot segments
 * resolved, a bare `?` dropped; path case, query and trailing slashes are kept as they are, and `/index.html` is not
 * folded into `/`. Pages that are the same under two URLs are caught by the content hash instead (`duplicate`).
 *
 * Same site: scheme, port and host of the start page after its redirects, where `www.example.com` and
 * `example.com` count as one host. Each of the two has its own robots.txt, fetched when first needed.
 *
 * Sitemaps (docs/decisions/sitemaps-and-path-patterns.md): after the start page, the site's sitemaps (its robots.txt
 * `Sitemap:` lines and `/sitemap.xml`, same site only) are read, and the pages they list are queued before the links
 * found on pages, which are followed after them. `maxPages` counts pages kept, whichever way they were found.
 * Include and exclude path patterns filter both: a URL outside them is never requested; the start page is always
 * requested (its links lead into the site) but kept only when it matches.
 *
 * Redirects are followed one hop at a time (each hop is a SafeFetch call, so the SSRF policy is checked per hop), so
 * that every hop is checked against robots.txt and the site before it is requested: a redirect into a disallowed path
 * or off the site is never fetched. The start page alone may redirect to another site, which then becomes the site.
 *
 * Never throws for what the site does (unreachable, blocked, empty): the result carries `error` instead. It throws
 * for invalid options (TypeError), when `signal` aborts (its reason, like fetch) and when `onProgress` throws.
 */

export interface CrawlProgress {
  /** URLs requested (robots.txt and redirect hops not counted; robots-disallowed URLs are never requested). */
  fetched: number;
  /** Pages with text kept (pages.length). */
  indexed: number;
  /** skipped.length */
  skipped: number;
  /** URLs discovered and still waiting. */
  queued: number;
  /** Page addresses taken from the site's sitemaps (0 when it has none). */
  sitemapUrls: number;
  lastUrl?: string;
  /** Count per skip reason. */
  skippedReasons: Record<string, number>;
}

export interface CrawledPage {
  /** Final URL after redirects, normalised. */
  url: string;
  title: string;
  text: string;
  /** The text's structure (headings, list items, table rows), which the knowledge splitter reads. */
  blocks: Block[];
  /** sha256 (hex) of the text lower-cased with whitespace collapsed. */
  contentHash: string;
}

/**
 * Why a URL produced no page:
 * - robots: disallowed by robots.txt (or robots.txt was unreachable, which RFC 9309 treats as disallow all)
 * - not_html: the response is not text/html or application/xhtml+xml
 * - too_large: body over maxPageBytes
 * - timeout: no complete response within pageTimeoutMs (redirect hops included)
 * - http_<status>: a final status outside 2xx (e.g. http_404, http_500)
 * - blocked: the SSRF policy refused the address
 * - network: DNS failure, connection refused or reset
 * - duplicate: text already seen under another URL, or a redirect to a URL already crawled
 * - empty: no text once boilerplate is removed
 * - off_site: a redirect that leaves the site (not followed)
 * - too_many_redirects: more than 5 redirect hops
 * - bad_url: an unusable URL (e.g. a redirect to a non-http location)
 * - excluded: outside the include/exclude path patterns (the start page, or where a redirect led)
 */
export type SkipReason =
  | 'robots'
  | 'not_html'
  | 'too_large'
  | 'timeout'
  | `http_${number}`
  | 'blocked'
  | 'network'
  | 'duplicate'
  | 'empty'
  | 'off_site'
  | 'too_many_redirects'
  | 'bad_url'
  | 'excluded';

export interface CrawlResult {
  pages: CrawledPage[];
  skipped: { url: string; reason: SkipReason }[];
  progress: CrawlProgress;
  /** Set when nothing was indexed: why (start page unreachable or blocked, robots.txt, no text on the site). */
  error?: string;
  /**
   * The same as a code the dashboard words for people: the start page's skip reason (`network`, `robots`,
   * `http_404`, …), `bad_url`, or `no_text` when pages were read and none had text.
   */
  errorCode?: ScanErrorCode;
}

/**
 * `robots_unreachable`: robots.txt could not be read (an error or no answer), which RFC 9309 treats as "disallow all".
 * `no_match`: no address of the site matched the include/exclude path patterns.
 */
export type ScanErrorCode = SkipReason | 'no_text' | 'robots_unreachable' | 'no_match';

export interface CrawlOptions {
  startUrl: string;
  /** Pages with text to collect; at most maxPages * 3 URLs are requested in all. */
  maxPages: number;
  fetch: SafeFetch;
  /** Sent as User-Agent; its product token selects the robots.txt group. */
  userAgent: string;
  /** Budget per page, redirect hops included; also the robots.txt timeout. Default 10 000. */
  pageTimeoutMs?: number;
  /** Default 2 MiB. */
  maxPageBytes?: number;
  /** robots.txt Crawl-delay is honoured up to this many milliseconds between requests to one host. Default 5 000. */
  maxCrawlDelayMs?: number;
  /** Path patterns: only URLs whose path matches an include pattern (if any) and no exclude pattern are taken. */
  include?: readonly string[];
  exclude?: readonly string[];
  /** Called after every URL taken from the queue and every sitemap file, with a snapshot. Awaited. */
  onProgress?: (p: CrawlProgress) => void | Promise<void>;
  signal?: AbortSignal;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1';

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

type Fetched =
  | { ok: true; res: SafeResponse; url: string }
  | { ok: false; reason: SkipReason; detail: string; code?: ScanErrorCode };

function fail(reason: SkipReason, detail: string, code?: ScanErrorCode): Fetched {
  return { ok: false, reason, detail, ...(code ? { code } : {}) };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new TypeError(`${name} must be an integer >= ${min}`);
  return value;
}

export async function crawlSite(opts: CrawlOptions): Promise<CrawlResult> {
  const maxPages = positiveInt('maxPages', opts.maxPages, 1);
  const pageTimeoutMs = positiveInt('pageTimeoutMs', opts.pageTimeoutMs, 10_000);
  const maxPageBytes = positiveInt('maxPageBytes', opts.maxPageBytes, 2 * 1024 * 1024);
  const maxCrawlDelayMs = positiveInt('maxCrawlDelayMs', opts.maxCrawlDelayMs, 5_000, 0);
  if (typeof opts.fetch !== 'function') throw new TypeError('fetch must be a SafeFetch');
  if (typeof opts.userAgent !== 'string' || !opts.userAgent.trim()) throw new TypeError('userAgent is required');
  const { fetch, userAgent, signal, onProgress } = opts;
  const maxRequests = maxPages * 3;

  const pages: CrawledPage[] = [];
  const skipped: CrawlResult['skipped'] = [];
  const progress: CrawlProgress = {
    fetched: 0,
    indexed: 0,
    skipped: 0,
    queued: 0,
    sitemapUrls: 0,
    skippedReasons: {},
  };
  const patterns: PathPatterns = { include: opts.include, exclude: opts.exclude };
  /** Whether any address passed the patterns: without one, a scan that found nothing says so. */
  let matchedAny = !hasPatterns(patterns);
  const snapshot = (): CrawlProgress => ({ ...progress, skippedReasons: { ...progress.skippedReasons } });
  const result = (error?: string, errorCode?: ScanErrorCode): CrawlResult => {
    const out: CrawlResult = { pages, skipped, progress: snapshot() };
    if (error !== undefined && pages.length === 0) {
      out.error = error;
      if (errorCode) out.errorCode = errorCode;
    }
    return out;
  };

  const start = normalizeUrl(opts.startUrl);
  if (!start)
    return result(`Invalid start URL: only absolute http(s) URLs without credentials can be crawled`, 'bad_url');

  const robotsByOrigin = new Map<string, Promise<RobotsFetchResult>>();
  const robotsFor = (url: URL): Promise<RobotsFetchResult> => {
    let robots = robotsByOrigin.get(url.origin);
    if (!robots) {
      robots = fetchRobots(fetch, url.origin, userAgent, { timeoutMs: pageTimeoutMs, signal });
      robotsByOrigin.set(url.origin, robots);
    }
    return robots;
  };
  const lastRequestAt = new Map<string, number>();

  let site = siteKey(start);
  const seen = new Set<string>([start]);
  const queue: string[] = [start];
  let head = 0;
  const hashes = new Set<string>();

  /** Requests `url`, following redirects hop by hop; every hop is checked against the site and robots.txt. */
  async function fetchPage(url: string, isStart: boolean): Promise<Fetched> {
    // The budget starts with the first request, not with robots.txt or Crawl-delay waits before it.
    let deadline: number | undefined;
    let current = url;
    for (let hop = 0; ; hop++) {
      const target = new URL(current);
      if (!isStart && siteKey(current) !== site) return fail('off_site', `redirect to ${target.origin}`);

      const robots = await robotsFor(target);
      if (robots.status === 'blocked') return fail('blocked', robots.detail);
      if (!robots.robots.isAllowed(`${target.pathname}${target.search}`)) {
        const why =
          robots.status === 'unreachable'
            ? `robots.txt could not be fetched (${robots.detail}), which RFC 9309 treats as disallowing everything`
            : 'disallowed by robots.txt';
        return fail('robots', why, robots.status === 'unreachable' ? 'robots_unreachable' : undefined);
      }
      // A redirect to a URL crawled or queued on its own: that URL is (or will be) the page.
      if (hop > 0 && seen.has(current)) return fail('duplicate', `redirect to ${current}, crawled on its own`);
      if (hop > 0) seen.add(current);

      // Crawl-delay is per host; capped so one robots.txt cannot stall the job for hours.
      const delayMs = Math.min((robots.robots.crawlDelaySeconds ?? 0) * 1000, maxCrawlDelayMs);
      const last = lastRequestAt.get(target.host);
      if (delayMs > 0 && last !== undefined) {
        const wait = last + delayMs - Date.now();
        if (wait > 0) await sleep(wait, signal);
      }

      deadline ??= Date.now() + pageTimeoutMs;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return fail('timeout', `no response within ${pageTimeoutMs} ms`);
      if (hop === 0) progress.fetched++;
      lastRequestAt.set(target.host, Date.now());
      let res: SafeResponse;
      try {
        res = await fetch(current, {
          headers: { 'user-agent': userAgent, accept: ACCEPT },
          timeoutMs: remaining,
          maxBytes: maxPageBytes,
          followRedirects: false,
          signal,
        });
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (err instanceof OutboundBlockedError) return fail('blocked', err.message);
        if (err instanceof OutboundError) return fail(err.code, err.message);
        throw err;
      }

      const location = res.headers.location;
      if (!REDIRECT_STATUSES.has(res.status) || !location) return { ok: true, res, url: current };
      if (hop >= MAX_REDIRECTS) return fail('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`);
      const next = normalizeUrl(location, current);
      if (!next) return fail('bad_url', `redirect to an unusable location`);
      current = next;
    }
  }

  function skip(url: string, reason: SkipReason): void {
    skipped.push({ url, reason });
    progress.skippedReasons[reason] = (progress.skippedReasons[reason] ?? 0) + 1;
  }

  /** Queues a URL found on a page or in a sitemap: same site, within the patterns, not seen before. */
  function enqueue(raw: string): string | undefined {
    const url = normalizeUrl(raw);
    if (!url || seen.has(url) || siteKey(url) !== site || !pathAllowed(url, patterns)) return undefined;
    matchedAny = true;
    seen.add(url);
    queue.push(url);
    return url;
  }

  /**
   * Reads the site's sitemaps (its robots.txt `Sitemap:` lines, then `/sitemap.xml`) and queues the pages they
   * list. Sitemap files are requests of their own (not counted in `fetched`), each within the page budget.
   */
  async function queueSitemaps(origin: string): Promise<void> {
    const robots = await robotsFor(new URL(origin));
    const roots = [...robots.robots.sitemaps, `${origin}/sitemap.xml`];
    const found = await readSitemaps(roots, {
      fetch,
      userAgent,
      timeoutMs: pageTimeoutMs,
      maxFiles: LIMITS.scanSitemap.files,
      maxBytes: LIMITS.scanSitemap.bytes,
      maxUrls: LIMITS.scanSitemap.urls,
      signal,
      allowedFile: async (raw) => {
        const url = normalizeUrl(raw);
        if (!url || siteKey(url) !== site) return undefined;
        const target = new URL(url);
        const rules = await robotsFor(target);
        return rules.status !== 'blocked' && rules.robots.isAllowed(`${target.pathname}${target.search}`)
          ? url
          : undefined;
      },
      allowedPage: (raw) => {
        const url = normalizeUrl(raw);
        return url && siteKey(url) === site && pathAllowed(url, patterns) ? url : undefined;
      },
      onFile: async (url) => {
        progress.lastUrl = url;
        progress.queued = queue.length - head;
        if (onProgress) await onProgress(snapshot());
      },
    });
    for (const url of found.urls) if (enqueue(url)) progress.sitemapUrls++;
    progress.queued = queue.length - head;
  }

  let startError: string | undefined;
  let startReason: ScanErrorCode | undefined;
  while (head < queue.length && pages.length < maxPages && progress.fetched < maxRequests) {
    if (signal?.aborted) throw signal.reason;
    const url = queue[head++];
    const isStart = url === start;
    progress.lastUrl = url;
    const fetched = await fetchPage(url, isStart);

    let links: string[] = [];
    if (!fetched.ok) {
      skip(url, fetched.reason);
      if (isStart) {
        startError = `Start page ${url} could not be crawled (${fetched.reason}): ${fetched.detail}`;
        startReason = fetched.code ?? fetched.reason;
      }
    } else {
      const { res, url: finalUrl } = fetched;
      progress.lastUrl = finalUrl;
      // The start page's redirects decide which site this is (http → https, example.com → www.example.com).
      if (isStart) site = siteKey(finalUrl);
      const contentType = res.headers['content-type'];
      if (res.status < 200 || res.status >= 300) {
        skip(url, `http_${res.status}`);
        if (isStart) {
          startError = `Start page ${url} answered HTTP ${res.status}`;
          startReason = `http_${res.status}`;
        }
      } else if (!isHtml(contentType, res.body)) {
        skip(url, 'not_html');
        if (isStart) {
          startError = `Start page ${url} is not HTML (${contentType ?? 'no content type'})`;
          startReason = 'not_html';
        }
      } else {
        const page = extractPage(decodeHtml(res.body, contentType), finalUrl);
        links = page.links;
        const hash = page.text ? contentHash(page.text) : '';
        // The start page is read whatever the patterns say (its links lead into the site), but kept only within them.
        const within = pathAllowed(finalUrl, patterns);
        if (within) matchedAny = true;
        if (!within) skip(url, 'excluded');
        else if (!page.text) skip(url, 'empty');
        else if (hashes.has(hash)) skip(url, 'duplicate');
        else {
          hashes.add(hash);
          pages.push({ url: finalUrl, title: page.title, text: page.text, blocks: page.blocks, contentHash: hash });
        }
      }
    }

    // The sitemaps' pages come first, then the links found on pages (the start page's included), breadth first.
    if (isStart && pages.length < maxPages) {
      progress.indexed = pages.length;
      progress.skipped = skipped.length;
      await queueSitemaps(new URL(fetched.ok ? fetched.url : url).origin);
      progress.lastUrl = fetched.ok ? fetched.url : url;
    }
    for (const link of links) enqueue(link);

    progress.indexed = pages.length;
    progress.skipped = skipped.length;
    progress.queued = queue.length - head;
    if (onProgress) await onProgress(snapshot());
  }

  if (pages.length > 0) return result();
  if (startError) return result(startError, startReason);
  if (!matchedAny) {
    return result('No address of the site matched the include and exclude path patterns', 'no_match');
  }
  return result(`No page with text found (${progress.fetched} fetched, ${skipped.length} skipped)`, 'no_text');
}
