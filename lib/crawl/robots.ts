// Hand-written on purpose: robots-parser 3.0.1 was tried behind a thin adapter and fails test/unit/crawl-robots.test.ts
// on these RFC 9309 rules (do not retry unless it fixes them):
// - 2.2.1: a matching but empty group (`User-Agent: quxbot` with no rules) falls back to `*` instead of allowing all
//   ("the RFC 9309 section 5.1 example").
// - 2.2.1: a Sitemap (or any other) line between two user-agent lines splits the group, so `User-agent: *` loses the
//   rules that follow ("rules before any user-agent are ignored; ... unknown lines tolerated").
// - 2.2.2: escapes of unreserved characters are not decoded, so `Disallow: /%62ar` does not match /bar
//   ("percent-encoding normalisation").
// - 2.2.4 (a MAY the crawler relies on): misspelt keys such as `dissallow` are ignored (same test as the Sitemap one).
// Nor does it export normalizePath, matchesPattern or productToken, which the tests import.
import { OutboundBlockedError, OutboundError, type SafeFetch } from '../http/safe-fetch';

/**
 * robots.txt per RFC 9309 (Robots Exclusion Protocol).
 *
 * - Groups: one or more consecutive `user-agent` lines followed by rules. The crawler obeys the groups whose
 *   product token equals its own (case-insensitive; all such groups merged), else the `*` groups (merged), else
 *   nothing. The crawler's token is the leading `[A-Za-z_-]` run of its User-Agent ("AcmeBot/1.0 (+url)" → acmebot);
 *   a robots.txt line like `User-agent: AcmeBot/2.0` is reduced the same way.
 * - Rules: the matching rule with the longest pattern (in octets) wins; on a tie Allow wins; no match allows.
 *   `*` matches any run of characters, a trailing `$` anchors the end. An empty Disallow or Allow value is no rule.
 * - Paths and patterns are compared after percent-encoding normalisation: non-ASCII is UTF-8 percent-encoded,
 *   escapes of unreserved characters are decoded, remaining escapes are upper-cased.
 * - Matching is linear in pattern × path (no regular expressions), so a hostile robots.txt cannot make it backtrack.
 * - `/robots.txt` itself is always allowed. `Crawl-delay` (not in the RFC, but widely used) is reported, not enforced.
 */

export interface Robots {
  isAllowed(pathAndQuery: string): boolean;
  crawlDelaySeconds?: number;
}

interface Rule {
  allow: boolean;
  pattern: string;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelay?: number;
}

export const ALLOW_ALL: Robots = Object.freeze({ isAllowed: () => true });
export const DISALLOW_ALL: Robots = Object.freeze({ isAllowed: (p: string) => normalizePath(p) === '/robots.txt' });

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encoding normalisation shared by patterns and URL paths (RFC 9309 section 2.2.2). */
export function normalizePath(input: string): string {
  let out = '';
  for (const ch of input) {
    if (ch.charCodeAt(0) < 0x80) out += ch;
    else {
      try {
        out += encodeURIComponent(ch);
      } catch {
        out += '%EF%BF%BD'; // lone surrogate: U+FFFD, as a URL parser would
      }
    }
  }
  return out.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Whether `pattern` (with `*` and a trailing `$`) matches a prefix of `path` (or all of it, with `$`). */
export function matchesPattern(path: string, pattern: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  // Sorted, distinct positions in `path` reachable after the pattern so far: an NFA simulation.
  let positions: number[] = [0];
  for (const c of body) {
    if (c === '*') {
      const from = positions[0];
      positions = [];
      for (let p = from; p <= path.length; p++) positions.push(p);
      continue;
    }
    const next: number[] = [];
    for (const p of positions) if (p < path.length && path[p] === c) next.push(p + 1);
    if (next.length === 0) return false;
    positions = next;
  }
  return anchored ? positions[positions.length - 1] === path.length : true;
}

/** The product token of a User-Agent string or of a robots.txt user-agent value, lower-cased. */
export function productToken(userAgent: string): string {
  const trimmed = userAgent.trim();
  if (trimmed === '*') return '*';
  return (/^[A-Za-z_-]+/.exec(trimmed)?.[0] ?? '').toLowerCase();
}

// Keys are compared with case, spaces, '-' and '_' removed; a few frequent misspellings are accepted (RFC 9309 2.2.4
// lets crawlers interpret typos).
const KEYS: Record<string, 'agent' | 'allow' | 'disallow' | 'delay'> = {
  useragent: 'agent',
  allow: 'allow',
  disallow: 'disallow',
  dissallow: 'disallow',
  disalow: 'disallow',
  dissalow: 'disallow',
  crawldelay: 'delay',
};

function parseGroups(text: string): Group[] {
  const groups: Group[] = [];
  let current: Group | undefined;
  let inAgentLines = false;
  for (const rawLine of text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key =
      KEYS[
        line
          .slice(0, colon)
          .toLowerCase()
          .replace(/[\s_-]/g, '')
      ];
    const value = line.slice(colon + 1).trim();
    if (key === 'agent') {
      // A user-agent line after rules starts a new group; consecutive ones share one.
      if (!current || !inAgentLines) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      const token = productToken(value);
      if (token) current.agents.push(token);
      inAgentLines = true;
    } else if (key === 'allow' || key === 'disallow') {
      inAgentLines = false;
      // Rules before any user-agent line belong to no group; an empty value is no rule (RFC 9309 2.2.2).
      if (current && value) current.rules.push({ allow: key === 'allow', pattern: normalizePath(value) });
    } else if (key === 'delay') {
      inAgentLines = false;
      const seconds = Number(value);
      if (current && current.crawlDelay === undefined && Number.isFinite(seconds) && seconds >= 0) {
        current.crawlDelay = seconds;
      }
    }
    // Other lines (sitemap, host, unknown) neither end nor start a group.
  }
  return groups;
}

export function parseRobots(text: string, userAgent: string): Robots {
  const token = productToken(userAgent);
  const groups = parseGroups(text);
  let selected = token && token !== '*' ? groups.filter((g) => g.agents.includes(token)) : [];
  if (selected.length === 0) selected = groups.filter((g) => g.agents.includes('*'));
  const rules = selected.flatMap((g) => g.rules);
  const crawlDelaySeconds = selected.find((g) => g.crawlDelay !== undefined)?.crawlDelay;

  const isAllowed = (pathAndQuery: string): boolean => {
    let path = normalizePath(pathAndQuery);
    if (!path.startsWith('/')) path = `/${path}`;
    if (path === '/robots.txt') return true;
    let best: Rule | undefined;
    for (const rule of rules) {
      if (best && rule.pattern.length < best.pattern.length) continue;
      if (best && rule.pattern.length === best.pattern.length && (best.allow || !rule.allow)) continue;
      if (matchesPattern(path, rule.pattern)) best = rule;
    }
    return best ? best.allow : true;
  };
  return crawlDelaySeconds === undefined ? { isAllowed } : { isAllowed, crawlDelaySeconds };
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
export const ROBOTS_MAX_BYTES = 512 * 1024;

export function robotsForStatus(status: number, body: Buffer | string, userAgent: string): RobotsFetchResult {
  if (status >= 200 && status < 300) {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    return { robots: parseRobots(text, userAgent), status: 'parsed', detail: `HTTP ${status}` };
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
  try {
    const res = await fetch(`${origin}/robots.txt`, {
      headers: { 'user-agent': userAgent, accept: 'text/plain, */*;q=0.5' },
      timeoutMs: init.timeoutMs,
      maxBytes: ROBOTS_MAX_BYTES,
      signal: init.signal,
    });
    return robotsForStatus(res.status, res.body, userAgent);
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
