import type { z } from 'zod';
import { errors } from '../../lib/errors';
import { listScans, recordScanAccepted, type ScanRun } from '../../lib/scans/runs';
import { checkScanAddress, runningScan, setScanSchedule, startSiteScan } from '../../lib/scans/service';
import type { SiteScanInput } from '../../workflows/site-scan';
import type { AppDeps } from '../app';
import type { RouteDef } from '../route';
import { dashboardBot } from './dashboard';
import { BotIdParams, ScanList, ScanListQuery, ScrapeAccepted, ScrapeRequest } from '../schemas/scan';
import { AUTH_ERRORS } from './conversation';

type ScrapeBody = z.output<typeof ScrapeRequest>;

/** Shown for a row left `scanning` by a run that is no longer running (terminated by ops, or timed out). */
const STOPPED = 'The scan stopped without finishing';

/** Spec, Admin helpers → POST /v1/admin/scrape, and the dashboard's view of scan progress. */
export function scanRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/v1/admin/scrape',
      operationId: 'scrapeSite',
      tag: 'Admin helpers',
      summary: 'Scans a website into the knowledge base, in the background; optionally re-reads it on a schedule.',
      description:
        'Crawls from `url` over the same site (robots.txt obeyed) and indexes every page with text as a knowledge ' +
        'source (`origin: scan`, `url` set; a re-read replaces a page’s source). One scan per bot at a time: ' +
        '409 `conflict` while one runs. An unreachable site, a site without text or a blocked crawl give no error ' +
        'and add nothing. The result shows in `GET /v1/api/knowledge`. Never rate limited.',
      keys: ['secret'],
      body: ScrapeRequest,
      responses: { 202: { description: 'The scan has started.', schema: ScrapeAccepted } },
      errors: ['bad_request', ...AUTH_ERRORS, 'conflict', 'payload_too_large', 'internal_error'],
      handler: async (ctx) => {
        const body = ctx.state.input.body as ScrapeBody;
        const { botId, workspaceId } = ctx.state.principal as { botId: string; workspaceId: string };
        const url = checkScanAddress(body.url, { allowLoopback: deps.config.SSRF_ALLOW_LOOPBACK });
        const input: SiteScanInput = { botId, workspaceId, url, maxPages: body.max_pages, trigger: 'api' };

        const { runId } = await startSiteScan(deps.temporal, input);
        // The activity writes the row too; this one only makes the scan visible before a worker picks it up.
        await recordScanAccepted(deps.db, { id: runId, botId, url, trigger: 'api', maxPages: input.maxPages }).catch(
          (err: unknown) => ctx.state.log.warn({ err, runId }, 'scan row not recorded at start'),
        );
        // After the start, so a 409 changes nothing, the schedule included.
        const schedule = await setScanSchedule(deps.temporal, { ...input, refreshDays: body.refresh_days });

        ctx.status = 202;
        ctx.body = { status: 'scanning', url, max_pages: input.maxPages, schedule };
      },
    },
    {
      method: 'get',
      path: '/v1/dashboard/bots/{id}/scans',
      operationId: 'listScans',
      tag: 'Dashboard',
      unstable: true,
      summary: 'Recent site scans of a bot with their progress.',
      description: 'Progress comes from the scan record, which the crawl rewrites after every page.',
      session: true,
      params: BotIdParams,
      query: ScanListQuery,
      responses: { 200: { description: 'Scans, newest first', schema: ScanList } },
      errors: ['bad_request', 'unauthorized', 'not_found', 'internal_error'],
      handler: async (ctx) => {
        const { id } = await dashboardBot(ctx, deps);
        const { limit } = ctx.state.input.query as z.output<typeof ScanListQuery>;
        // Temporal first, rows second: a row still `scanning` that is not the running run was left by a run that
        // stopped without its last word (terminated, timed out), unless it started after the check (clock margin).
        const checkedAt = Date.now();
        const running = await runningScan(deps.temporal, id);
        const scans = await listScans(deps.db, id, limit);
        const stopped = (s: ScanRun) =>
          s.status === 'scanning' && s.id !== running && s.started_at < checkedAt - 10_000;
        ctx.body = {
          running: running !== null,
          scans: scans.map((s) => (stopped(s) ? { ...s, status: 'failed', error: s.error ?? STOPPED } : s)),
        };
      },
    },
  ];
}
