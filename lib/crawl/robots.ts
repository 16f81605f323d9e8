import RobotsParser from 'robots-parser';

import { OutboundBlockedError, OutboundError, type SafeFetch } from '../http/safe-fetch';

/**
 * robots.txt per RFC 9309 (Robots Exclusion Protocol), read by `robots-parser` (docs/decisions/
 * 150-readability-and-robots-parser.md). The library groups the lines, matches patterns (`*`, a trailing `$`; Google's
 * linear algorithm, so a hostile file cannot make it backtrack), picks the longest match (Allow on a tie), merges the
 * groups of one agent, falls back to `*`, and reads Crawl-delay and Sitemap lines.
 *
 * It misses four RFC 9309 points, which `canonicalLines` below restores by rewriting the file's lines before it
 * reads them:
 * - 2.2.1: a matching group without rules allows everything (the library would fall back to `*`);
 * - 2.2.1: a line other than user-agent and rules (Sitemap, Host, anything unknown) does not end a group;
 * - 2.2.2: paths and patterns compare after percent-encoding normalisation (escapes of unreserved characters
 *   decoded, the others upper-cased, non-ASCII UTF-8 encoded), on both sides;
 * - 2.2.4 (a MAY): frequent misspellings of keys (`dissallow`) are read, and a byte order mark is ignored.
 *
 * The crawler's product token is the leading `[A-Za-z_-]` run of its User-Agent ("AcmeBot/1.0 (+url)" → acmebot); a
 * robots.txt line like `User-agent: AcmeBot/2.0` is reduced the same way. `/robots.txt` itself is always allowed.
 * `Crawl-delay` (not in the RFC, but widely used) is reported; the crawler honours it up to a cap.
 */

export interface Robots {
  isAllowed(pathAndQuery: string): boolean;
  crawlDelaySeconds?: number;
  /** Absolute URLs of the file's `Sitemap:` lines, resolved against robots.txt's own address. */
  sitemaps: string[];
}

const ALLOW_ALL: Robots = Object.freeze({ isAllowed: () => true, sitemaps: [] });
const DISALLOW_ALL: Robots = Object.freeze({
  isAllowed: (p: string) => normalizePath(p) === '/robots.txt',
  sitemaps: [],
});

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encoding normalisation shared by patterns and URL paths (RFC 9309 section 2.2.2). */
function normalizePath(input: string): string {
  let out = '';
  for (const ch of input) {
    if (ch === '%') out += ch;
    else {
      try {
        // What encodeURI leaves alone stays; the rest (non-ASCII, spaces, `|`, `^`…) is UTF-8 percent-encoded, as
        // the library encodes patterns, so a path and a pattern are compared in one form.
        out += encodeURI(ch);
      } catch {
        out += '%EF%BF%BD'; // lone surrogate: U+FFFD, as a URL parser would
      }
    }
  }
  let path = out.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
  if (!path.startsWith('/')) path = `/${path}`;
  return path;
}

/** The product token of a User-Agent string or of a robots.txt user-agent value, lower-cased. */
function productToken(userAgent: string): string {
  const trimmed = userAgent.trim();
  if (trimmed === '*') return '*';
  return (/^[A-Za-z_-]+/.exec(trimmed)?.[0] ?? '').toLowerCase();
}

// Keys compared with case, spaces, '-' and '_' removed; a few frequent misspellings accepted (RFC 9309 2.2.4).
const KEYS: Record<string, string> = {
  useragent: 'User-agent',
  allow: 'Allow',
  disallow: 'Disallow',
  dissallow: 'Disallow',
  disalow: 'Disallow',
  dissalow: 'Disallow',
  crawldelay: 'Crawl-delay',
};

/**
 * The file's group lines in the form the library reads as RFC 9309 does: keys spelt right, user-agents as product
 * tokens, patterns normalised, every other line left out (so it cannot split a group), and an empty `Disallow:`
 * (which is no rule) after each run of user-agent lines, so that a group without rules still exists.
 */
function canonicalLines(text: string): string {
  const out: string[] = [];
  let inAgents = false;
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '');
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key =
      KEYS[
        line
          .slice(0, colon)
          .toLowerCase()
          .replace(/[\s_-]/g, '')
      ];
    if (!key) continue;
    const value = line.slice(colon + 1).trim();
    if (key === 'User-agent') {
      const token = productToken(value);
      if (token) out.push(`User-agent: ${token}`);
      inAgents = true;
      continue;
    }
    if (inAgents) out.push('Disallow:');
    inAgents = false;
    out.push(`${key}: ${key === 'Crawl-delay' ? value : value && normalizePath(value)}`);
  }
  if (inAgents) out.push('Disallow:');
  return out.join('\n');
}

/** Any address works: the library only compares the path and query with the file's rules. */
const BASE = 'http://robots.invalid';

/** `robotsUrl` resolves relative Sitemap lines; absent, they are dropped. */
export function parseRobots(text: string, userAgent: string, robotsUrl?: string): Robots {
  const token = productToken(userAgent) || '*';
  const rules = RobotsParser(`${BASE}/robots.txt`, canonicalLines(text));
  const isAllowed = (pathAndQuery: string): boolean => {
    const path = normalizePath(pathAndQuery);
    if (path === '/robots.txt') return true;
    return rules.isAllowed(`${BASE}${path}`, token) !== false;
  };
  const delay = rules.getCrawlDelay(token);
  const sitemaps: string[] = [];
  for (const line of RobotsParser(`${BASE}/robots.txt`, text).getSitemaps()) {
    try {
      const url = new URL(line, robotsUrl ?? undefined);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && !sitemaps.includes(url.href))
        sitemaps.push(url.href);
    } catch {
      // not a URL: ignored, as any other line the crawler cannot use
    }
  }
  return delay !== undefined && Number.isFinite(delay) && delay >= 0
    ? { isAllowed, crawlDelaySeconds: delay, sitemaps }
    : { isAllowed, sitemaps };
}

// ---------------------------------------------------------------------------------------------------------------
// Fetching
// ---------------------------------------------------------------------------------------------------------------

/**
 * - parsed: 2xx, rules apply.
 * - missing: 4xx (except 429) or a redirect chain that could not be followed: "unavailable", crawl everything.
 * - unreachable: 5xx, 429, network error, timeout, over the size limit: RFC 9309 2.3.1.4 says assume complete
 *   disallow.
 * - blocked: the SSRF policy refused the address; the site's pages would be refused just the same.
 */
export type RobotsStatus = 'parsed' | 'missing' | 'unreachable' | 'blocked';

export interface RobotsFetchResult {
  robots: Robots;
  status: RobotsStatus;
  /** Human-readable cause for the crawl report, e.g. "HTTP 503". */
  detail: string;
}

/** RFC 9309 requires parsing at least 500 KiB. */
const ROBOTS_MAX_BYTES = 512 * 1024;

export function robotsForStatus(
  status: number,
  body: Buffer | string,
  userAgent: string,
  robotsUrl?: string,
): RobotsFetchResult {
  if (status >= 200 && status < 300) {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    return { robots: parseRobots(text, userAgent, robotsUrl), status: 'parsed', detail: `HTTP ${status}` };
  }
  if (status === 429 || status >= 500) return { robots: DISALLOW_ALL, status: 'unreachable', detail: `HTTP ${status}` };
  return { robots: ALLOW_ALL, status: 'missing', detail: `HTTP ${status}` };
}

/**
 * Fetches and interprets `<origin>/robots.txt` through `fetch` (redirects followed by SafeFetch, each hop checked).
 * Throws only the caller's abort reason and programmer errors.
 */
export async function fetchRobots(
  fetch: SafeFetch,
  origin: string,
  userAgent: string,
  init: { timeoutMs: number; signal?: AbortSignal },
): Promise<RobotsFetchResult> {
  const url = `${origin}/robots.txt`;
  try {
    const res = await fetch(url, {
      headers: { 'user-agent': userAgent, accept: 'text/plain, */*;q=0.5' },
      timeoutMs: init.timeoutMs,
      maxBytes: ROBOTS_MAX_BYTES,
      signal: init.signal,
    });
    // Sitemap lines resolve against where the file was finally read (after redirects).
    return robotsForStatus(res.status, res.body, userAgent, res.url || url);
  } catch (err) {
    if (init.signal?.aborted) throw init.signal.reason;
    if (err instanceof OutboundBlockedError) return { robots: DISALLOW_ALL, status: 'blocked', detail: err.message };
    if (err instanceof OutboundError) {
      // RFC 9309 2.3.1.2: after too many redirects the file may be taken as unavailable.
      if (err.code === 'too_many_redirects') return { robots: ALLOW_ALL, status: 'missing', detail: err.message };
      return { robots: DISALLOW_ALL, status: 'unreachable', detail: `${err.code}: ${err.message}` };
    }
    throw err;
  }
}
