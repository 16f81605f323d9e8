import { normalizeUrl } from '../crawl/crawler';
import { ApiError } from '../errors';
import { classifyAddress, parseIPv4, parseIPv6 } from '../http/safe-fetch';
import type { SiteScanInput } from '../../workflows/contracts/site-scan';
import type { ScanDeps } from './deps';
import { recordScanAccepted } from './runs';
import { markScheduleSynced, recordWantedSchedule, setScanSchedule } from './schedules';
import { startSiteScan } from './workflow';

/** Starting a scan (contract, Admin helpers → POST /v1/admin/scrape): its address checked, its workflow, its Schedule. */

/**
 * Starts a scan of the bot (409 `conflict` while one runs) and sets, replaces or removes the address's refresh
 * schedule. The schedule changes only after the scan has started, so a 409 changes nothing.
 */
export async function startScan(
  deps: ScanDeps,
  bot: { botId: string; workspaceId: string },
  request: { url: string; max_pages: number; refresh_days: number; include?: string[]; exclude?: string[] },
  log: { warn(obj: object, msg: string): void },
) {
  const url = checkScanAddress(request.url, { allowLoopback: deps.allowLoopback });
  const input: SiteScanInput = {
    botId: bot.botId,
    workspaceId: bot.workspaceId,
    url,
    maxPages: request.max_pages,
    include: request.include ?? [],
    exclude: request.exclude ?? [],
    trigger: 'api',
  };
  const { runId } = await startSiteScan(deps.temporal, input);
  // The activity writes the row too; this one only makes the scan visible before a worker picks it up.
  await recordScanAccepted(deps.db, {
    id: runId,
    botId: bot.botId,
    url,
    trigger: 'api',
    maxPages: input.maxPages,
    include: input.include,
    exclude: input.exclude,
  }).catch((err: unknown) => log.warn({ err, runId }, 'scan row not recorded at start'));
  // The schedule the address should have is recorded first, then set in Temporal: a failure in between is
  // converged by the maintenance workflow (`resyncStale`).
  const wanted = { ...input, refreshDays: request.refresh_days };
  const rev = await recordWantedSchedule(deps.db, wanted);
  const schedule = await setScanSchedule(deps.temporal, wanted);
  await markScheduleSynced(deps.db, wanted, rev);
  return {
    status: 'scanning' as const,
    url,
    max_pages: input.maxPages,
    include: input.include ?? [],
    exclude: input.exclude ?? [],
    schedule,
  };
}

/**
 * The start address as it will be crawled, or a 400. Only IP literals are judged here (contract: private and internal
 * addresses are blocked): the API never resolves names, so a name pointing inside is refused by the crawler's
 * SafeFetch at every request instead, and such a scan adds nothing (contract: a blocked crawl gives no HTTP error).
 */
export function checkScanAddress(raw: string, opts: { allowLoopback: boolean }): string {
  const url = normalizeUrl(raw);
  if (!url) throw new ApiError('bad_request', 'url: must be an absolute http(s) URL without user name or password');
  const { hostname } = new URL(url);
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  // WHATWG URL parsing has already turned odd IPv4 notations (0x7f.1, 2130706433) into dotted quads.
  if (parseIPv6(host) !== null || parseIPv4(host) !== null) {
    const verdict = classifyAddress(host, { allowLoopback: opts.allowLoopback });
    if (!verdict.allowed) {
      const why = `url: ${host} is not a public address (${verdict.reason}); it cannot be scanned`;
      throw new ApiError('bad_request', why);
    }
  }
  return url;
}
