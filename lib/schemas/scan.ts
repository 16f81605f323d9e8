import { z } from 'zod';
import { LIMITS } from '../limits';

const PAGES = LIMITS.scanMaxPages;
const MAX_SCAN_URL_CHARS = LIMITS.scanUrlChars;
const REFRESH = LIMITS.refreshDays;
const PATTERNS = LIMITS.scanPathPatterns;

/** One include or exclude list (docs/decisions/151-sitemaps-and-path-patterns.md); trimmed and deduplicated. */
const pathPatterns = (which: 'include' | 'exclude') =>
  z
    .array(
      z
        .string({ error: 'must be a string' })
        .trim()
        .min(1, 'must not be empty')
        .max(PATTERNS.chars, `must be at most ${PATTERNS.chars} characters`)
        .regex(/^[/*]/, 'must start with / (a path) or *')
        .regex(/^[^\s\u0000-\u001f\u007f]*$/, 'must not contain spaces or control characters'),
      { error: 'must be an array of path patterns' },
    )
    .max(PATTERNS.count, `must have at most ${PATTERNS.count} patterns`)
    .optional()
    .transform((v) => [...new Set(v ?? [])])
    .describe(
      which === 'include'
        ? `Only pages whose path matches one of these patterns are read and kept (sitemap pages and links alike); the ` +
            `start page is still read for its links. A pattern is matched against the whole path (no query), \`*\` ` +
            `matching any characters, \`/\` included: \`/docs/*\`. At most ${PATTERNS.count} patterns of ` +
            `${PATTERNS.chars} characters. Absent or empty: every page of the site.`
        : `Pages whose path matches one of these patterns are never read (same syntax as \`include\`); they win over ` +
            `\`include\`. At most ${PATTERNS.count} patterns of ${PATTERNS.chars} characters.`,
    );

/**
 * Any integer, including ones beyond the safe range (`.int()` refuses those): out-of-range `max_pages` is clamped,
 * not refused (contract, Admin helpers). Shown as `integer` in the contract.
 */
const anyInteger = () =>
  z
    .number({ error: 'must be an integer' })
    .refine(Number.isInteger, 'must be an integer')
    .meta({ type: 'integer' } as Record<string, unknown>);

export const ScrapeRequest = z
  .object({
    url: z
      .string({ error: 'is required' })
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_SCAN_URL_CHARS, `must be at most ${MAX_SCAN_URL_CHARS} characters`)
      .meta({ format: 'uri' } as Record<string, unknown>)
      .describe(
        'Start page, http(s). An IP literal in a private or internal range is refused (400); a host name ' +
          'resolving to one is refused by the crawler, which then adds nothing.',
      ),
    max_pages: anyInteger()
      .optional()
      .transform((v) => Math.min(PAGES.max, Math.max(PAGES.min, v ?? PAGES.default)))
      .describe(
        `Pages with text to index, ${PAGES.min} to ${PAGES.max} (default ${PAGES.default}); values outside are ` +
          'clamped to the nearest bound.',
      ),
    refresh_days: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(REFRESH.min, `must be ${REFRESH.min} (no re-read) or 1 to ${REFRESH.max}`)
      .max(REFRESH.max, `must be ${REFRESH.min} (no re-read) or 1 to ${REFRESH.max}`)
      .optional()
      .transform((v) => v ?? REFRESH.default)
      .describe(
        `Re-read the address every that many days, 1 to ${REFRESH.max}; 0 = never (and removes an earlier schedule ` +
          `of this address). Default ${REFRESH.default}. A re-read keeps this request's \`max_pages\`, \`include\` ` +
          `and \`exclude\`.`,
      ),
    include: pathPatterns('include'),
    exclude: pathPatterns('exclude'),
  })
  .meta({ id: 'ScrapeRequest' });

export const ScanScheduleInfo = z
  .object({
    refresh_days: z.number().int().describe('0 when the address is not re-read.'),
    next_run_at: z.number().int().nullable().describe('Unix ms of the next re-read; null without a schedule.'),
  })
  .meta({ id: 'ScanSchedule', description: 'The re-read schedule of this address after the request.' });

export const ScrapeAccepted = z
  .object({
    status: z.literal('scanning'),
    url: z.string().describe('The start address as it is crawled (normalized: lower-case host, no fragment).'),
    max_pages: z.number().int().describe('After clamping.'),
    include: z.array(z.string()).describe('The include path patterns in force (trimmed, deduplicated); [] for none.'),
    exclude: z.array(z.string()).describe('The exclude path patterns in force; [] for none.'),
    schedule: ScanScheduleInfo,
  })
  .meta({ id: 'ScrapeAccepted' });

export const ScanRunSchema = z
  .object({
    id: z.string().describe('Run id of the scan (the Temporal run of `scan/{botId}`).'),
    url: z.string(),
    status: z.enum(['scanning', 'done', 'failed', 'cancelled']),
    trigger: z.enum(['api', 'schedule']),
    max_pages: z.number().int(),
    include: z.array(z.string()).describe('Include path patterns of this scan; [] for none.'),
    exclude: z.array(z.string()).describe('Exclude path patterns of this scan; [] for none.'),
    attempt: z.number().int().describe('Crawl attempt; a retried attempt starts the counters again.'),
    pages_fetched: z.number().int().describe('URLs requested (robots.txt and redirect hops not counted).'),
    pages_indexed: z.number().int().describe('Pages with text kept.'),
    pages_skipped: z.number().int(),
    pages_queued: z.number().int().describe('URLs found and not visited (yet).'),
    sitemap_urls: z
      .number()
      .int()
      .describe(
        "Page addresses taken from the site's sitemaps (robots.txt `Sitemap:` lines, `/sitemap.xml`); 0 without.",
      ),
    pages_removed: z.number().int().describe('Sources of pages gone from the site, removed after a complete re-read.'),
    skipped_reasons: z
      .record(z.string(), z.number().int())
      .describe('Count per skip reason (robots, timeout, http_404, excluded — outside the path patterns —…).'),
    last_url: z.string().nullable(),
    error: z.string().nullable().describe('Why nothing was indexed, or why the scan failed.'),
    error_code: z
      .string()
      .nullable()
      .describe(
        "The same as a code: the start page's reason (`network`, `timeout`, `robots`, `blocked`, `not_html`, `http_404`, …), `bad_url`, `no_text`, `no_match` (nothing matched the path patterns), or `cancelled`.",
      ),
    started_at: z.number().int(),
    updated_at: z.number().int(),
    finished_at: z.number().int().nullable(),
  })
  .meta({ id: 'ScanRun' });

export const ScanList = z
  .object({
    running: z.boolean().describe('A scan of this bot runs now: a new scrape request would get 409.'),
    scans: z.array(ScanRunSchema).describe('Newest first.'),
  })
  .meta({ id: 'ScanList' });

export { BotParams } from './common';

export const ScanListQuery = z.object({
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(LIMITS.scanList.min, `must be at least ${LIMITS.scanList.min}`)
    .max(LIMITS.scanList.max, `must be at most ${LIMITS.scanList.max}`)
    .default(LIMITS.scanList.default)
    .describe(
      `Scans to return, ${LIMITS.scanList.min} to ${LIMITS.scanList.max} (default ${LIMITS.scanList.default}).`,
    ),
});

export const ScanCancelled = z
  .object({ status: z.literal('cancelling'), workflow_id: z.string() })
  .meta({ id: 'ScanCancelled' });
