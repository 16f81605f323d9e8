import { OutboundBlockedError, OutboundError, type SafeFetch, type SafeResponse } from '../http/safe-fetch';
import type { Block } from '../knowledge/document';
import { LIMITS } from '../limits';
import { decodeHtml, isHtml } from './decode';
import { extractPage } from './extract';
import { contentHash, normalizeUrl, siteKey } from './identity';
import { hasPatterns, pathAllowed, type PathPatterns } from './patterns';
import { fetchRobots, type RobotsFetchResult } from './robots';
import { readSitemaps } from './sitemap';

// What makes two URLs, two sites or two pages the same.
export { contentHash, normalizeUrl, siteKey } from './identity';

/**
 * Site crawler behind POST /v1/admin/scrape: breadth first from the start URL, same site only, robots.txt obeyed,
 * every request through the injected SSRF-safe client, one request at a time.
 *
 * URL identity (which URLs, sites and pages are the same) is ./identity.ts's.
 *
 * Same site: scheme, port and host of the start page after its redirects, where `www.example.com` and
 * `example.com` count as one host. Each of the two has its own robots.txt, fetched when first needed.
 *
 * Sitemaps (docs/decisions/151-sitemaps-and-path-patterns.md): after the start page, the site's sitemaps (its robots.txt
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

/** The options checked, with their defaults: what every step of one crawl reads. */
interface CrawlSettings {
  maxPages: number;
  /** At most maxPages * 3 URLs are requested in all. */
  maxRequests: number;
  pageTimeoutMs: number;
  maxPageBytes: number;
  maxCrawlDelayMs: number;
  fetch: SafeFetch;
  userAgent: string;
  patterns: PathPatterns;
  onProgress?: (p: CrawlProgress) => void | Promise<void>;
  signal?: AbortSignal;
}

/** Checks the options (TypeError for invalid ones) and fills in the defaults. */
function settingsOf(opts: CrawlOptions): CrawlSettings {
  const maxPages = positiveInt('maxPages', opts.maxPages, 1);
  const pageTimeoutMs = positiveInt('pageTimeoutMs', opts.pageTimeoutMs, 10_000);
  const maxPageBytes = positiveInt('maxPageBytes', opts.maxPageBytes, 2 * 1024 * 1024);
  const maxCrawlDelayMs = positiveInt('maxCrawlDelayMs', opts.maxCrawlDelayMs, 5_000, 0);
  if (typeof opts.fetch !== 'function') throw new TypeError('fetch must be a SafeFetch');
  if (typeof opts.userAgent !== 'string' || !opts.userAgent.trim()) throw new TypeError('userAgent is required');
  const { fetch, userAgent, signal, onProgress } = opts;
  return {
    maxPages,
    maxRequests: maxPages * 3,
    pageTimeoutMs,
    maxPageBytes,
    maxCrawlDelayMs,
    fetch,
    userAgent,
    patterns: { include: opts.include, exclude: opts.exclude },
    onProgress,
    signal,
  };
}

function emptyProgress(): CrawlProgress {
  return { fetched: 0, indexed: 0, skipped: 0, queued: 0, sitemapUrls: 0, skippedReasons: {} };
}

export async function crawlSite(opts: CrawlOptions): Promise<CrawlResult> {
  const settings = settingsOf(opts);
  const start = normalizeUrl(opts.startUrl);
  if (!start) {
    return {
      pages: [],
      skipped: [],
      progress: emptyProgress(),
      error: `Invalid start URL: only absolute http(s) URLs without credentials can be crawled`,
      errorCode: 'bad_url',
    };
  }
  return new SiteCrawl(settings, start).run();
}

/** One crawl: what it has found so far, and the steps that advance it, one URL of the queue at a time. */
class SiteCrawl {
  private readonly pages: CrawledPage[] = [];
  private readonly skipped: CrawlResult['skipped'] = [];
  private readonly progress = emptyProgress();
  /** Whether any address passed the patterns: without one, a scan that found nothing says so. */
  private matchedAny: boolean;
  /** Changes once: to where the start page's redirects lead. */
  private site: string;
  private readonly seen: Set<string>;
  private readonly queue: string[];
  private head = 0;
  private readonly hashes = new Set<string>();
  private readonly robotsByOrigin = new Map<string, Promise<RobotsFetchResult>>();
  private readonly lastRequestAt = new Map<string, number>();
  /** Why the start page gave nothing: the crawl's error when no page is kept. */
  private startError: string | undefined;
  private startReason: ScanErrorCode | undefined;

  constructor(
    private readonly settings: CrawlSettings,
    private readonly start: string,
  ) {
    this.matchedAny = !hasPatterns(settings.patterns);
    this.site = siteKey(start);
    this.seen = new Set<string>([start]);
    this.queue = [start];
  }

  async run(): Promise<CrawlResult> {
    const { maxPages, maxRequests, signal } = this.settings;
    while (this.head < this.queue.length && this.pages.length < maxPages && this.progress.fetched < maxRequests) {
      if (signal?.aborted) throw signal.reason;
      await this.crawlNext();
    }
    if (this.pages.length > 0) return this.result();
    if (this.startError) return this.result(this.startError, this.startReason);
    if (!this.matchedAny) {
      return this.result('No address of the site matched the include and exclude path patterns', 'no_match');
    }
    return this.result(
      `No page with text found (${this.progress.fetched} fetched, ${this.skipped.length} skipped)`,
      'no_text',
    );
  }

  private snapshot(): CrawlProgress {
    return { ...this.progress, skippedReasons: { ...this.progress.skippedReasons } };
  }

  private result(error?: string, errorCode?: ScanErrorCode): CrawlResult {
    const out: CrawlResult = { pages: this.pages, skipped: this.skipped, progress: this.snapshot() };
    if (error !== undefined && this.pages.length === 0) {
      out.error = error;
      if (errorCode) out.errorCode = errorCode;
    }
    return out;
  }

  /** The next URL of the queue: fetched, read, its links queued (after the sitemaps' pages, for the start page). */
  private async crawlNext(): Promise<void> {
    const { progress } = this;
    const url = this.queue[this.head++];
    const isStart = url === this.start;
    progress.lastUrl = url;
    const fetched = await this.fetchPage(url, isStart);
    const links = fetched.ok ? this.readResponse(url, isStart, fetched) : [];
    if (!fetched.ok) {
      this.skip(url, fetched.reason);
      if (isStart)
        this.startFailed(
          `Start page ${url} could not be crawled (${fetched.reason}): ${fetched.detail}`,
          fetched.code ?? fetched.reason,
        );
    }

    // The sitemaps' pages come first, then the links found on pages (the start page's included), breadth first.
    if (isStart && this.pages.length < this.settings.maxPages) {
      progress.indexed = this.pages.length;
      progress.skipped = this.skipped.length;
      await this.queueSitemaps(new URL(fetched.ok ? fetched.url : url).origin);
      progress.lastUrl = fetched.ok ? fetched.url : url;
    }
    for (const link of links) this.enqueue(link);

    progress.indexed = this.pages.length;
    progress.skipped = this.skipped.length;
    progress.queued = this.queue.length - this.head;
    if (this.settings.onProgress) await this.settings.onProgress(this.snapshot());
  }

  private startFailed(error: string, reason: ScanErrorCode): void {
    this.startError = error;
    this.startReason = reason;
  }

  /** Reads a response: a page with new text is kept. Returns the links found on it. */
  private readResponse(url: string, isStart: boolean, fetched: Extract<Fetched, { ok: true }>): string[] {
    const { res, url: finalUrl } = fetched;
    this.progress.lastUrl = finalUrl;
    // The start page's redirects decide which site this is (http → https, example.com → www.example.com).
    if (isStart) this.site = siteKey(finalUrl);
    const contentType = res.headers['content-type'];
    if (res.status < 200 || res.status >= 300) {
      this.skip(url, `http_${res.status}`);
      if (isStart) this.startFailed(`Start page ${url} answered HTTP ${res.status}`, `http_${res.status}`);
      return [];
    }
    if (!isHtml(contentType, res.body)) {
      this.skip(url, 'not_html');
      if (isStart) this.startFailed(`Start page ${url} is not HTML (${contentType ?? 'no content type'})`, 'not_html');
      return [];
    }
    const page = extractPage(decodeHtml(res.body, contentType), finalUrl);
    const hash = page.text ? contentHash(page.text) : '';
    // The start page is read whatever the patterns say (its links lead into the site), but kept only within them.
    const within = pathAllowed(finalUrl, this.settings.patterns);
    if (within) this.matchedAny = true;
    if (!within) this.skip(url, 'excluded');
    else if (!page.text) this.skip(url, 'empty');
    else if (this.hashes.has(hash)) this.skip(url, 'duplicate');
    else {
      this.hashes.add(hash);
      this.pages.push({ url: finalUrl, title: page.title, text: page.text, blocks: page.blocks, contentHash: hash });
    }
    return page.links;
  }

  private robotsFor(url: URL): Promise<RobotsFetchResult> {
    let robots = this.robotsByOrigin.get(url.origin);
    if (!robots) {
      const { fetch, userAgent, pageTimeoutMs, signal } = this.settings;
      robots = fetchRobots(fetch, url.origin, userAgent, { timeoutMs: pageTimeoutMs, signal });
      this.robotsByOrigin.set(url.origin, robots);
    }
    return robots;
  }

  /** Requests `url`, following redirects hop by hop; every hop is checked against the site and robots.txt. */
  private async fetchPage(url: string, isStart: boolean): Promise<Fetched> {
    const { pageTimeoutMs, signal } = this.settings;
    // The budget starts with the first request, not with robots.txt or Crawl-delay waits before it.
    let deadline: number | undefined;
    let current = url;
    for (let hop = 0; ; hop++) {
      const target = new URL(current);
      if (!isStart && siteKey(current) !== this.site) return fail('off_site', `redirect to ${target.origin}`);

      const robots = await this.robotsFor(target);
      if (robots.status === 'blocked') return fail('blocked', robots.detail);
      if (!robots.robots.isAllowed(`${target.pathname}${target.search}`)) {
        const why =
          robots.status === 'unreachable'
            ? `robots.txt could not be fetched (${robots.detail}), which RFC 9309 treats as disallowing everything`
            : 'disallowed by robots.txt';
        return fail('robots', why, robots.status === 'unreachable' ? 'robots_unreachable' : undefined);
      }
      // A redirect to a URL crawled or queued on its own: that URL is (or will be) the page.
      if (hop > 0 && this.seen.has(current)) return fail('duplicate', `redirect to ${current}, crawled on its own`);
      if (hop > 0) this.seen.add(current);

      await this.waitCrawlDelay(target.host, robots.robots.crawlDelaySeconds);

      deadline ??= Date.now() + pageTimeoutMs;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return fail('timeout', `no response within ${pageTimeoutMs} ms`);
      if (hop === 0) this.progress.fetched++;
      this.lastRequestAt.set(target.host, Date.now());
      let res: SafeResponse;
      try {
        res = await this.settings.fetch(current, {
          headers: { 'user-agent': this.settings.userAgent, accept: ACCEPT },
          timeoutMs: remaining,
          maxBytes: this.settings.maxPageBytes,
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

  /** Crawl-delay is per host; capped so one robots.txt cannot stall the job for hours. */
  private async waitCrawlDelay(host: string, crawlDelaySeconds: number | undefined): Promise<void> {
    const delayMs = Math.min((crawlDelaySeconds ?? 0) * 1000, this.settings.maxCrawlDelayMs);
    const last = this.lastRequestAt.get(host);
    if (delayMs > 0 && last !== undefined) {
      const wait = last + delayMs - Date.now();
      if (wait > 0) await sleep(wait, this.settings.signal);
    }
  }

  private skip(url: string, reason: SkipReason): void {
    this.skipped.push({ url, reason });
    this.progress.skippedReasons[reason] = (this.progress.skippedReasons[reason] ?? 0) + 1;
  }

  /** Queues a URL found on a page or in a sitemap: same site, within the patterns, not seen before. */
  private enqueue(raw: string): string | undefined {
    const url = normalizeUrl(raw);
    if (!url || this.seen.has(url) || siteKey(url) !== this.site || !pathAllowed(url, this.settings.patterns))
      return undefined;
    this.matchedAny = true;
    this.seen.add(url);
    this.queue.push(url);
    return url;
  }

  /**
   * Reads the site's sitemaps (its robots.txt `Sitemap:` lines, then `/sitemap.xml`) and queues the pages they
   * list. Sitemap files are requests of their own (not counted in `fetched`), each within the page budget.
   */
  private async queueSitemaps(origin: string): Promise<void> {
    const { fetch, userAgent, pageTimeoutMs, signal, onProgress, patterns } = this.settings;
    const robots = await this.robotsFor(new URL(origin));
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
        if (!url || siteKey(url) !== this.site) return undefined;
        const target = new URL(url);
        const rules = await this.robotsFor(target);
        return rules.status !== 'blocked' && rules.robots.isAllowed(`${target.pathname}${target.search}`)
          ? url
          : undefined;
      },
      allowedPage: (raw) => {
        const url = normalizeUrl(raw);
        return url && siteKey(url) === this.site && pathAllowed(url, patterns) ? url : undefined;
      },
      onFile: async (url) => {
        this.progress.lastUrl = url;
        this.progress.queued = this.queue.length - this.head;
        if (onProgress) await onProgress(this.snapshot());
      },
    });
    for (const url of found.urls) if (this.enqueue(url)) this.progress.sitemapUrls++;
    this.progress.queued = this.queue.length - this.head;
  }
}
