import { Context } from '@temporalio/activity';
import { crawlSite, type CrawlResult } from '../lib/crawl/crawler';
import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import { UnknownBotError, type Embedder } from '../lib/knowledge/store';
import { recordScanAttempt, recordScanFailed, recordScanFinished, recordScanProgress } from '../lib/scans/runs';
import { isCompleteRead, removeVanishedPages, scanKey, writeScannedPage } from '../lib/scans/sources';
import { failure } from '../workflows/failures';
import type { SiteScanInput, SiteScanSummary } from '../workflows/contracts/site-scan';

export interface SiteScanDeps {
  db: Db;
  /** The SSRF-safe client: every page, redirect hop and robots.txt goes through it. */
  fetch: SafeFetch;
  embed?: Embedder;
  /** Default page budget when the workflow input names none; absent = the crawler's default. */
  pageTimeoutMs?: number;
  userAgent?: string;
}

/** Its product token (`AgentPlatformBot`) is what site owners name in robots.txt. */
const CRAWLER_USER_AGENT = 'AgentPlatformBot/1.0 (+site scan for an AI assistant knowledge base)';

/** A scan is recorded under its Temporal run id: `scan/{botId}` is reused by every scan of the bot. */
function scanIdOf(ctx: Context): string {
  const runId = ctx.info.workflowExecution?.runId;
  if (!runId) {
    throw failure('scan_invalid', 'A site scan runs only inside the siteScan workflow');
  }
  return runId;
}

export function createSiteScanActivities(deps: SiteScanDeps) {
  return {
    /**
     * Crawls the site and writes every page with text as a `scan` source. Heartbeats after every URL with the
     * crawler's progress and mirrors it into `site_scans` for the dashboard. Each attempt starts over; writes are
     * idempotent (stable source id per page URL), so a retried attempt leaves no duplicate.
     */
    async crawlAndIndex(input: SiteScanInput): Promise<SiteScanSummary> {
      const ctx = Context.current();
      const scanId = scanIdOf(ctx);
      const key = scanKey(input.url);
      try {
        await recordScanAttempt(deps.db, {
          id: scanId,
          botId: input.botId,
          url: input.url,
          trigger: input.trigger,
          maxPages: input.maxPages,
          include: input.include,
          exclude: input.exclude,
          attempt: ctx.info.attempt,
        });
      } catch (err) {
        // foreign_key_violation: the bot is gone (a scheduled refresh may outlive it).
        if ((err as { code?: string }).code === '23503') {
          throw failure('bot_not_found', `Bot ${input.botId} no longer exists`);
        }
        throw err;
      }

      let crawl: CrawlResult;
      try {
        crawl = await crawlSite({
          startUrl: input.url,
          maxPages: input.maxPages,
          fetch: deps.fetch,
          userAgent: deps.userAgent ?? CRAWLER_USER_AGENT,
          pageTimeoutMs: input.pageTimeoutMs ?? deps.pageTimeoutMs,
          include: input.include,
          exclude: input.exclude,
          // A heartbeat timeout or a cancelled workflow stops the crawl between two requests.
          signal: ctx.cancellationSignal,
          onProgress: async (progress) => {
            ctx.heartbeat({ phase: 'crawling', ...progress });
            // Progress is for display: a database blip must not throw away a long crawl (the end is recorded).
            await recordScanProgress(deps.db, scanId, progress).catch((err: unknown) =>
              ctx.log.warn('scan progress not recorded', { scanId, error: String(err) }),
            );
          },
        });
      } catch (err) {
        if (err instanceof TypeError) throw failure('scan_invalid', err.message);
        throw err;
      }

      let removed = 0;
      try {
        for (const [i, page] of crawl.pages.entries()) {
          await writeScannedPage(deps.db, { botId: input.botId, scanKey: key, page }, { embed: deps.embed });
          ctx.heartbeat({ phase: 'indexing', written: i + 1, of: crawl.pages.length });
        }
        // Only a complete read can tell a page is gone; a read cut short by max_pages removes nothing.
        if (isCompleteRead(crawl)) {
          removed = await removeVanishedPages(deps.db, { botId: input.botId, scanKey: key, result: crawl });
        }
      } catch (err) {
        if (err instanceof UnknownBotError) {
          throw failure('bot_not_found', err.message);
        }
        throw err;
      }

      // Spec: an unreachable site, a site without text or a blocked crawl add nothing and give no HTTP error; the
      // dashboard shows the scan as failed with the crawler's reason.
      const status = crawl.error === undefined ? 'done' : 'failed';
      await recordScanFinished(deps.db, scanId, {
        status,
        progress: crawl.progress,
        removed,
        error: crawl.error,
        errorCode: crawl.errorCode,
      });
      const { fetched, indexed, skipped } = crawl.progress;
      const summary: SiteScanSummary = { status, fetched, indexed, skipped, removed };
      if (crawl.error !== undefined) summary.error = crawl.error;
      return summary;
    },

    /** Marks the running scan failed once the crawl activity has given up, or cancelled when someone stopped it. */
    async markScanFailed(error: string, cancelled = false): Promise<void> {
      await recordScanFailed(deps.db, scanIdOf(Context.current()), error, cancelled);
    },
  };
}

export type SiteScanActivities = ReturnType<typeof createSiteScanActivities>;
