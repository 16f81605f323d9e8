/**
 * Include and exclude path patterns of a site scan (docs/decisions/151-sitemaps-and-path-patterns.md). A pattern is
 * matched against a URL's whole path (percent-escapes decoded, the query left out); `*` matches any run of
 * characters, `/` included, and every other character itself. A URL is taken when its path matches one of the
 * include patterns (or there are none) and none of the exclude patterns.
 *
 * Matching runs over the sets of positions reachable so far, linear in pattern × path: patterns come from users,
 * and a regular expression built from `/*a*a*a…` could backtrack for minutes.
 */

export interface PathPatterns {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** Whether `pattern` matches all of `path`. */
export function matchesPathPattern(path: string, pattern: string): boolean {
  let positions = new Set<number>([0]);
  for (const c of pattern) {
    const next = new Set<number>();
    if (c === '*') {
      const from = Math.min(...positions);
      for (let p = from; p <= path.length; p++) next.add(p);
    } else {
      for (const p of positions) if (p < path.length && path[p] === c) next.add(p + 1);
    }
    if (next.size === 0) return false;
    positions = next;
  }
  return positions.has(path.length);
}

/** The path a pattern is compared with: percent-escapes decoded where they are valid UTF-8. */
function patternPath(url: string): string {
  const { pathname } = new URL(url);
  try {
    return decodeURI(pathname);
  } catch {
    return pathname;
  }
}

export function hasPatterns(p: PathPatterns): boolean {
  return Boolean(p.include?.length || p.exclude?.length);
}

/** Whether a URL is one the scan may take under its patterns. */
export function pathAllowed(url: string, p: PathPatterns): boolean {
  const path = patternPath(url);
  if (p.include?.length && !p.include.some((pattern) => matchesPathPattern(path, pattern))) return false;
  return !p.exclude?.some((pattern) => matchesPathPattern(path, pattern));
}
