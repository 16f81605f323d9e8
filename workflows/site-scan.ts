import {
  CancellationScope,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { SiteScanActivities } from '../activities/site-scan';
import { NON_RETRYABLE, failure, failureInfo } from './failures';
import {
  type SiteScanHandoff,
  type SiteScanInput,
  type SiteScanSummary,
  siteScanSearchAttributes,
  siteScanWorkflowId,
} from './contracts/site-scan';

/** The crawler's own default page budget (lib/crawl/crawler.ts). */
const DEFAULT_PAGE_TIMEOUT_MS = 10_000;
/** The longest robots.txt Crawl-delay the crawler honours between two requests. */
const MAX_CRAWL_DELAY_MS = 5_000;

function crawlActivities(pageTimeoutMs = DEFAULT_PAGE_TIMEOUT_MS) {
  return proxyActivities<SiteScanActivities>({
    // 150 pages are at most 450 requests. A responsive site takes seconds to a few minutes; one honouring a
    // Crawl-delay of 5 s takes under 40 minutes. An hour bounds an attempt that is stuck in some other way.
    startToCloseTimeout: '1 hour',
    // The activity heartbeats after every URL. Between two URLs the crawler may fetch a robots.txt and follow
    // redirects (each within the page budget) and wait out a Crawl-delay, so a silence longer than that means the
    // worker died: the attempt is retried on another worker within a minute instead of after the hour above.
    heartbeatTimeout: 3 * pageTimeoutMs + MAX_CRAWL_DELAY_MS + 10_000,
    // A retry re-crawls from the start and re-indexes idempotently (stable source ids; unchanged pages are not
    // re-indexed). Three attempts, because a scan blocks the bot's next one while it runs.
    retry: {
      initialInterval: '10 seconds',
      backoffCoefficient: 3,
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
}

// One UPDATE; retried a few times so a database blip does not leave the scan shown as running.
const { markScanFailed } = proxyActivities<SiteScanActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

/**
 * One site scan of one bot (contract, Admin helpers → POST /v1/admin/scrape): crawl from the start address and index
 * every page with text as a knowledge source, in one heartbeating activity. Progress lives in `site_scans`.
 *
 * A refresh Schedule cannot start this workflow as `scan/{botId}` (Temporal appends the fire time to scheduled
 * workflow ids), so a run under any other id only starts the real scan as `scan/{botId}` and ends: a running scan
 * of the bot, by the API or another schedule, makes it a no-op, as the API's 409 does for requests.
 */
export async function siteScanWorkflow(input: SiteScanInput): Promise<SiteScanSummary | SiteScanHandoff> {
  const workflowId = siteScanWorkflowId(input.botId);
  if (workflowInfo().workflowId !== workflowId) {
    try {
      await startChild(siteScanWorkflow, {
        workflowId,
        args: [input],
        // The scan outlives this short run.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        searchAttributes: siteScanSearchAttributes(input),
      });
      return { status: 'started', workflowId };
    } catch (err) {
      // Matched by name, not instanceof (STYLE.md): the class may come from another copy of the SDK.
      if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return { status: 'skipped', workflowId };
      throw err;
    }
  }

  try {
    return await crawlActivities(input.pageTimeoutMs).crawlAndIndex(input);
  } catch (err) {
    const { message } = failureInfo(err);
    // Also when the scan was cancelled (an owner stopped it): the row must not stay `scanning`. The same activity
    // with one more argument, so histories of earlier cancels replay unchanged.
    const cancelled = isCancellation(err);
    await CancellationScope.nonCancellable(() =>
      cancelled ? markScanFailed('Cancelled before it finished', true) : markScanFailed(message),
    );
    if (cancelled) throw err;
    throw failure('scan_failed', `Site scan failed: ${message}`);
  }
}
