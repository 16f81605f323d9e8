/**
 * Why a site scan found nothing, in words an owner can act on (the scan's `error_code`; its `error` stays for whoever
 * wants the technical detail). DOM-free: unit-tested in test/unit/scan-words.test.ts.
 */
export interface ScanProblem {
  /** What happened, in one sentence. */
  title: string;
  /** What to do about it. */
  hint: string;
}

export function scanProblem(code: string | null | undefined, url: string): ScanProblem | null {
  if (!code) return null;
  let host = url;
  try {
    host = new URL(url).host;
  } catch {
    // an address the crawler refused: shown as typed
  }
  const http = /^http_(\d{3})$/.exec(code);
  if (http) {
    const status = Number(http[1]);
    if (status === 401 || status === 403)
      return {
        title: `${host} refused to show its pages (HTTP ${status}).`,
        hint: 'Scan a public page, or ask whoever runs the site to let the scanner in.',
      };
    if (status === 404 || status === 410)
      return { title: `The start page was not found (HTTP ${status}).`, hint: 'Check the address and try again.' };
    if (status === 429)
      return { title: `${host} asked the scanner to slow down (HTTP 429).`, hint: 'Try again in a while.' };
    if (status >= 500)
      return { title: `${host} had an error (HTTP ${status}).`, hint: 'The site may be down; try again later.' };
    return { title: `The start page answered HTTP ${status}.`, hint: 'Check the address and try again.' };
  }
  switch (code) {
    case 'network':
      return {
        title: `${host} could not be reached.`,
        hint: 'Check the address for typos, and that the site is online.',
      };
    case 'timeout':
      return { title: `${host} took too long to answer.`, hint: 'The site may be slow or down; try again later.' };
    case 'robots':
      return {
        title: `The site's robots.txt does not allow scanning.`,
        hint: 'Allow the scanner in robots.txt, or add the texts by hand.',
      };
    case 'robots_unreachable':
      return {
        title: `${host} could not be reached, or its robots.txt could not be read.`,
        hint: 'Check the address and that the site is online; without a readable robots.txt nothing may be scanned.',
      };
    case 'blocked':
      return {
        title: 'This address cannot be scanned: it is private or not allowed.',
        hint: 'Scan a public website address.',
      };
    case 'not_html':
      return {
        title: 'The start page is not a web page (a file, an image or data).',
        hint: 'Start from an HTML page of the site; add documents as texts.',
      };
    case 'too_large':
      return { title: 'The start page is too large to read.', hint: 'Start from a smaller page of the site.' };
    case 'too_many_redirects':
      return {
        title: 'The start page redirects too many times.',
        hint: 'Start from the address the site finally shows in a browser.',
      };
    case 'bad_url':
      return {
        title: 'That is not a website address that can be scanned.',
        hint: 'Use an address like https://example.com.',
      };
    case 'off_site':
      return { title: 'The start page leads to another site.', hint: 'Start from the site the address redirects to.' };
    case 'empty':
    case 'no_text':
      return {
        title: 'No page with readable text was found.',
        hint: 'Pages drawn only by scripts cannot be read; add the texts by hand.',
      };
    case 'no_match':
      return {
        title: 'No page of the site matched the path patterns.',
        hint: 'Check the patterns: /docs/* reads every page under /docs/, and the start page’s links lead to them.',
      };
    case 'cancelled':
      return {
        title: 'This scan was stopped before it finished.',
        hint: 'Pages of earlier scans stay; start it again to read the whole site.',
      };
    default:
      return { title: 'The scan found nothing it could add.', hint: 'See the technical detail below.' };
  }
}

/**
 * Path patterns as an owner types them (`/docs/*, /help/*`): separated by commas or spaces, which no pattern holds
 * (the API refuses spaces; a comma in a path is rare enough to leave out).
 */
export function parsePatterns(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** What a scan read, in one line: its path patterns, and how many pages its sitemap listed. */
export function scanScope(scan: { include: string[]; exclude: string[]; sitemap_urls: number }): string | null {
  const parts: string[] = [];
  if (scan.include.length) parts.push(`Only ${scan.include.join(', ')}`);
  if (scan.exclude.length) parts.push(`${scan.include.length ? 'skipping' : 'Skipping'} ${scan.exclude.join(', ')}`);
  if (scan.sitemap_urls)
    parts.push(`${scan.sitemap_urls} ${scan.sitemap_urls === 1 ? 'page' : 'pages'} from the sitemap`);
  return parts.length ? parts.join(' · ') : null;
}
