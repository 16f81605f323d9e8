import { createHash } from 'node:crypto';
import type { CrawledPage, CrawlResult, SkipReason } from '../crawl/crawler';
import type { Db } from '../db';
import { deleteSource, upsertSource, type Embedder } from '../knowledge/store';

/**
 * Scanned pages as knowledge sources. A page's source id is derived from its normalized URL, so a re-read of the
 * page replaces its source and fragments instead of adding new ones (ids are per bot, so the bot is implied).
 */

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** `scan:<sha1 of the normalized page URL>`: stable across scans, schedules and retried activity attempts. */
function scanSourceId(pageUrl: string): string {
  return `scan:${sha1(pageUrl)}`;
}

/** Identity of a scanned address (normalized start URL): names its refresh schedule and the pages it produced. */
export function scanKey(startUrl: string): string {
  return sha1(startUrl);
}

/**
 * Skips that say nothing about whether a page still exists: its earlier source is kept. Every other reason (404,
 * now disallowed by robots.txt, now empty, now a duplicate…) counts as the page having left the site.
 */
const TRANSIENT_SKIPS = new Set<string>(['timeout', 'network', 'blocked', 'http_429']);

function isTransient(reason: SkipReason): boolean {
  return TRANSIENT_SKIPS.has(reason) || /^http_5\d\d$/.test(reason);
}

/**
 * A read that saw the whole site reachable from the start page: something was indexed, and the crawl stopped
 * because nothing was left to visit, not because of `max_pages` or the request budget. Only such a read can tell
 * that a page is gone.
 */
export function isCompleteRead(result: CrawlResult): boolean {
  return result.error === undefined && result.pages.length > 0 && result.progress.queued === 0;
}

/** Writes one page as a `scan` source and links it to the address that found it. Idempotent. */
export async function writeScannedPage(
  db: Db,
  input: { botId: string; scanKey: string; page: CrawledPage },
  opts: { embed?: Embedder } = {},
): Promise<string> {
  const { botId, page } = input;
  const { sourceId } = await upsertSource(
    db,
    {
      botId,
      sourceId: scanSourceId(page.url),
      title: page.title,
      text: page.text,
      // Split on the page's structure (its headings, lists and tables), like a file.
      document: { blocks: page.blocks },
      origin: 'scan',
      url: page.url,
    },
    opts,
  );
  await db.query(
    `INSERT INTO site_scan_pages (bot_id, scan_key, source_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [botId, input.scanKey, sourceId],
  );
  return sourceId;
}

/**
 * After a complete read of one address: removes the sources of pages this address produced earlier that are
 * neither among the pages read now nor only temporarily unreadable. A page another address also found stays (only
 * the link goes), and so does a source the integrator has since rewritten through the API (origin no longer `scan`).
 * Returns how many sources were deleted.
 */
export async function removeVanishedPages(
  db: Db,
  input: { botId: string; scanKey: string; result: CrawlResult },
): Promise<number> {
  const { botId, result } = input;
  const keep = new Set(result.pages.map((p) => scanSourceId(p.url)));
  for (const s of result.skipped) if (isTransient(s.reason)) keep.add(scanSourceId(s.url));

  const linked = await db.query<{ source_id: string }>(
    `SELECT source_id FROM site_scan_pages WHERE bot_id = $1 AND scan_key = $2`,
    [botId, input.scanKey],
  );
  const gone = linked.rows.map((r) => r.source_id).filter((id) => !keep.has(id));
  if (gone.length === 0) return 0;

  await db.query(`DELETE FROM site_scan_pages WHERE bot_id = $1 AND scan_key = $2 AND source_id = ANY($3)`, [
    botId,
    input.scanKey,
    gone,
  ]);
  const orphans = await db.query<{ source_id: string }>(
    `SELECT s.source_id FROM knowledge_sources s
      WHERE s.bot_id = $1 AND s.source_id = ANY($2) AND s.origin = 'scan'
        AND NOT EXISTS (SELECT 1 FROM site_scan_pages p WHERE p.bot_id = s.bot_id AND p.source_id = s.source_id)`,
    [botId, gone],
  );
  let removed = 0;
  // One at a time through the store, so each delete bumps the bot's knowledge version like any other delete.
  for (const { source_id } of orphans.rows) if (await deleteSource(db, botId, source_id)) removed++;
  return removed;
}
