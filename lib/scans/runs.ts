import type { CrawlProgress } from '../crawl/crawler';
import type { Queryable } from '../db';

/** `site_scans` rows: the record of each scan run that the dashboard reads as progress. */

export type ScanStatus = 'scanning' | 'done' | 'failed' | 'cancelled';
export type ScanTrigger = 'api' | 'schedule';

export interface ScanRun {
  /** Temporal run id of the scan. */
  id: string;
  url: string;
  status: ScanStatus;
  trigger: ScanTrigger;
  max_pages: number;
  include: string[];
  exclude: string[];
  attempt: number;
  pages_fetched: number;
  pages_indexed: number;
  pages_skipped: number;
  pages_queued: number;
  sitemap_urls: number;
  pages_removed: number;
  skipped_reasons: Record<string, number>;
  last_url: string | null;
  error: string | null;
  error_code: string | null;
  /** Unix ms */
  started_at: number;
  /** Unix ms */
  updated_at: number;
  /** Unix ms; null while scanning */
  finished_at: number | null;
}

export interface ScanStart {
  id: string;
  botId: string;
  url: string;
  trigger: ScanTrigger;
  maxPages: number;
  /** Path patterns; absent: none. */
  include?: string[];
  exclude?: string[];
}

/** The API's record at 202, so the dashboard shows the scan before a worker picks it up. Never overwrites. */
export async function recordScanAccepted(db: Queryable, s: ScanStart): Promise<void> {
  await db.query(
    `INSERT INTO site_scans (id, bot_id, url, trigger, status, max_pages, include, exclude)
     VALUES ($1, $2, $3, $4, 'scanning', $5, $6, $7)
     ON CONFLICT (id) DO NOTHING`,
    [s.id, s.botId, s.url, s.trigger, s.maxPages, s.include ?? [], s.exclude ?? []],
  );
}

/** The activity's record at the start of each attempt: a retry starts its counters from zero again. */
export async function recordScanAttempt(db: Queryable, s: ScanStart & { attempt: number }): Promise<void> {
  await db.query(
    `INSERT INTO site_scans (id, bot_id, url, trigger, status, max_pages, include, exclude, attempt)
     VALUES ($1, $2, $3, $4, 'scanning', $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET
       status = 'scanning', attempt = EXCLUDED.attempt, pages_fetched = 0, pages_indexed = 0, pages_skipped = 0,
       pages_queued = 0, sitemap_urls = 0, pages_removed = 0, skipped_reasons = '{}', last_url = NULL, error = NULL,
       finished_at = NULL, updated_at = now()`,
    [s.id, s.botId, s.url, s.trigger, s.maxPages, s.include ?? [], s.exclude ?? [], s.attempt],
  );
}

export async function recordScanProgress(db: Queryable, id: string, p: CrawlProgress): Promise<void> {
  await db.query(
    `UPDATE site_scans SET pages_fetched = $2, pages_indexed = $3, pages_skipped = $4, pages_queued = $5,
            skipped_reasons = $6, last_url = $7, sitemap_urls = $8, updated_at = now()
      WHERE id = $1 AND status = 'scanning'`,
    [id, p.fetched, p.indexed, p.skipped, p.queued, JSON.stringify(p.skippedReasons), p.lastUrl ?? null, p.sitemapUrls],
  );
}

export async function recordScanFinished(
  db: Queryable,
  id: string,
  end: {
    status: Exclude<ScanStatus, 'scanning'>;
    progress: CrawlProgress;
    removed: number;
    error?: string;
    errorCode?: string;
  },
): Promise<void> {
  const p = end.progress;
  await db.query(
    `UPDATE site_scans SET status = $2, pages_fetched = $3, pages_indexed = $4, pages_skipped = $5, pages_queued = $6,
            pages_removed = $7, skipped_reasons = $8, last_url = $9, error = $10, error_code = $11, sitemap_urls = $12,
            updated_at = now(), finished_at = now()
      WHERE id = $1`,
    [
      id,
      end.status,
      p.fetched,
      p.indexed,
      p.skipped,
      p.queued,
      end.removed,
      JSON.stringify(p.skippedReasons),
      p.lastUrl ?? null,
      end.error ?? null,
      end.errorCode ?? null,
      p.sitemapUrls,
    ],
  );
}

/** The workflow's last word when the crawl activity gave up (retries exhausted) or the scan was cancelled. */
export async function recordScanFailed(db: Queryable, id: string, error: string, cancelled = false): Promise<void> {
  await db.query(
    `UPDATE site_scans SET status = $3, error = $2, error_code = CASE WHEN $3 = 'cancelled' THEN 'cancelled' END,
            updated_at = now(), finished_at = now()
      WHERE id = $1 AND status = 'scanning'`,
    [id, error, cancelled ? 'cancelled' : 'failed'],
  );
}

const MS = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint AS ${column}`;

/** The bot's most recent scans, newest first. */
export async function listScans(db: Queryable, botId: string, limit: number): Promise<ScanRun[]> {
  const res = await db.query<ScanRun>(
    `SELECT id, url, status, trigger, max_pages, include, exclude, attempt, pages_fetched, pages_indexed,
            pages_skipped, pages_queued, sitemap_urls, pages_removed, skipped_reasons, last_url, error, error_code,
            ${MS('started_at')}, ${MS('updated_at')}, ${MS('finished_at')}
       FROM site_scans WHERE bot_id = $1 ORDER BY started_at DESC, id LIMIT $2`,
    [botId, limit],
  );
  return res.rows;
}
