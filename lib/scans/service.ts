import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import { type SiteScanInput, siteScanSearchAttributes, siteScanWorkflowId } from '../../workflows/contracts/site-scan';
import { siteScanWorkflow } from '../../workflows/site-scan';
import { normalizeUrl } from '../crawl/crawler';
import type { Db } from '../db';
import { ApiError } from '../errors';
import { classifyAddress, parseIPv4, parseIPv6 } from '../http/safe-fetch';
import type { Temporal } from '../temporal';
import { type ScanRun, listScans, recordScanAccepted } from './runs';
import { scanKey } from './sources';

/**
 * Site scans (spec, Admin helpers → POST /v1/admin/scrape): starting one, its refresh Schedule, and its progress
 * as the dashboard shows it. The crawl itself is the siteScan workflow's activity (activities/site-scan.ts).
 */

export interface ScanServiceDeps {
  db: Db;
  temporal: Temporal;
  /** Tests scan sites on loopback (SSRF_ALLOW_LOOPBACK); never in production. */
  allowLoopback: boolean;
}

/** Shown for a row left `scanning` by a run that is no longer running (terminated by ops, or timed out). */
const STOPPED = 'The scan stopped without finishing';

export function createScanService(deps: ScanServiceDeps) {
  return {
    /**
     * The hosts an agent is known to belong with: those it scanned or re-reads, and the sites allowed to embed its
     * widget (lower-cased, without a leading `www.`). A scan elsewhere reads someone else's site into the agent.
     */
    async knownHosts(botId: string): Promise<Set<string>> {
      const res = await deps.db.query<{ url: string }>(
        `SELECT url FROM site_scans WHERE bot_id = $1
         UNION SELECT url FROM scan_schedules WHERE bot_id = $1
         UNION SELECT unnest(allowed_origins) FROM bots WHERE id = $1`,
        [botId],
      );
      return new Set(res.rows.map((r) => hostOf(r.url)).filter((h): h is string => Boolean(h)));
    },

    /**
     * Starts a scan of the bot (409 `conflict` while one runs) and sets, replaces or removes the address's refresh
     * schedule. The schedule changes only after the scan has started, so a 409 changes nothing.
     */
    async start(
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
    },

    /**
     * Stops everything scanning does for a bot (the bot is being deleted): its refresh Schedules are deleted and a scan
     * in progress is terminated (its writes would find the bot gone).
     */
    async stopAllOfBot(botId: string): Promise<void> {
      const res = await deps.db.query<{ workspace_id: string; url: string; max_pages: number }>(
        `SELECT workspace_id, url, max_pages FROM scan_schedules WHERE bot_id = $1`,
        [botId],
      );
      for (const r of res.rows) {
        await setScanSchedule(deps.temporal, {
          botId,
          workspaceId: r.workspace_id,
          url: r.url,
          maxPages: r.max_pages,
          refreshDays: 0,
        });
      }
      await deps.temporal.client.workflow
        .getHandle(siteScanWorkflowId(botId))
        .terminate('the bot was deleted')
        .catch((err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        });
    },

    /**
     * Stops the bot's running scan (409 `conflict` when none runs): its workflow is cancelled, the crawl stops before
     * its next request, and the scan is recorded as `cancelled` (pages of an earlier scan stay; the refresh schedule
     * is kept). Answers at once: the row says `cancelled` a moment later.
     */
    async cancel(botId: string): Promise<{ status: 'cancelling'; workflow_id: string }> {
      const workflowId = siteScanWorkflowId(botId);
      if (!(await runningScan(deps.temporal, botId))) {
        throw new ApiError('conflict', 'No site scan of this bot is running');
      }
      await deps.temporal.client.workflow
        .getHandle(workflowId)
        .cancel()
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError)
            throw new ApiError('conflict', 'No site scan of this bot is running');
          throw err;
        });
      return { status: 'cancelling', workflow_id: workflowId };
    },

    /** Sets every refresh Schedule that lags what its address should have (rows older than a minute). */
    async resyncStale(): Promise<number> {
      const res = await deps.db.query<{
        bot_id: string;
        workspace_id: string;
        url: string;
        max_pages: number;
        refresh_days: number;
        include: string[];
        exclude: string[];
        rev: number;
      }>(
        `SELECT bot_id, workspace_id, url, max_pages, refresh_days, include, exclude, rev FROM scan_schedules
          WHERE synced_rev < rev AND updated_at < now() - interval '1 minute' ORDER BY updated_at LIMIT 100`,
      );
      for (const r of res.rows) {
        const wanted = {
          botId: r.bot_id,
          workspaceId: r.workspace_id,
          url: r.url,
          maxPages: r.max_pages,
          refreshDays: r.refresh_days,
          include: r.include,
          exclude: r.exclude,
        };
        await setScanSchedule(deps.temporal, wanted);
        await markScheduleSynced(deps.db, wanted, r.rev);
      }
      return res.rows.length;
    },

    /** The bot's recent scans with their progress, and whether one runs now. */
    async list(botId: string, limit: number): Promise<{ running: boolean; scans: ScanRun[] }> {
      // Temporal first, rows second: a row still `scanning` that is not the running run was left by a run that
      // stopped without its last word (terminated, timed out), unless it started after the check (clock margin).
      const checkedAt = Date.now();
      const running = await runningScan(deps.temporal, botId);
      const scans = await listScans(deps.db, botId, limit);
      const stopped = (s: ScanRun) => s.status === 'scanning' && s.id !== running && s.started_at < checkedAt - 10_000;
      return {
        running: running !== null,
        scans: scans.map((s) => (stopped(s) ? { ...s, status: 'failed' as const, error: s.error ?? STOPPED } : s)),
      };
    },
  };
}

export type ScanService = ReturnType<typeof createScanService>;

const DAY_MS = 86_400_000;

/**
 * The start address as it will be crawled, or a 400. Only IP literals are judged here (spec: private and internal
 * addresses are blocked): the API never resolves names, so a name pointing inside is refused by the crawler's
 * SafeFetch at every request instead, and such a scan adds nothing (spec: a blocked crawl gives no HTTP error).
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

/**
 * Starts the bot's scan as `scan/{botId}`. The workflow id is the lock: while a scan runs, the start fails and the
 * request gets 409 `conflict`; once it has closed (whatever its outcome) a new one may start.
 */
export async function startSiteScan(t: Temporal, input: SiteScanInput): Promise<{ runId: string }> {
  try {
    const handle = await t.client.workflow.start(siteScanWorkflow, {
      workflowId: siteScanWorkflowId(input.botId),
      taskQueue: t.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      searchAttributes: siteScanSearchAttributes(input),
    });
    return { runId: handle.firstExecutionRunId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ApiError('conflict', 'A site scan of this bot is already running; try again when it has finished');
    }
    throw err;
  }
}

/** The run id of the bot's scan if one is running now, else null. */
export async function runningScan(t: Temporal, botId: string): Promise<string | null> {
  try {
    const description = await t.client.workflow.getHandle(siteScanWorkflowId(botId)).describe();
    return description.status.name === 'RUNNING' ? description.runId : null;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

type WantedSchedule = {
  botId: string;
  workspaceId: string;
  url: string;
  maxPages: number;
  refreshDays: number;
  include?: string[];
  exclude?: string[];
};

/** Records the refresh schedule an address should have; returns its revision. */
async function recordWantedSchedule(db: Db, s: WantedSchedule): Promise<number> {
  const res = await db.query<{ rev: number }>(
    `INSERT INTO scan_schedules (bot_id, scan_key, workspace_id, url, max_pages, refresh_days, include, exclude)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (bot_id, scan_key) DO UPDATE
       SET url = EXCLUDED.url, max_pages = EXCLUDED.max_pages, refresh_days = EXCLUDED.refresh_days,
           include = EXCLUDED.include, exclude = EXCLUDED.exclude, rev = scan_schedules.rev + 1, updated_at = now()
     RETURNING rev`,
    [s.botId, scanKey(s.url), s.workspaceId, s.url, s.maxPages, s.refreshDays, s.include ?? [], s.exclude ?? []],
  );
  return res.rows[0].rev;
}

async function markScheduleSynced(db: Db, s: WantedSchedule, rev: number): Promise<void> {
  await db.query(
    `UPDATE scan_schedules SET synced_rev = GREATEST(synced_rev, $3) WHERE bot_id = $1 AND scan_key = $2`,
    [s.botId, scanKey(s.url), rev],
  );
}

/** One refresh schedule per (bot, address). */
export function scanScheduleId(botId: string, url: string): string {
  return `scan-refresh/${botId}/${scanKey(url)}`;
}

export interface ScanSchedule {
  refresh_days: number;
  /** Unix ms of the next re-read; null when there is no schedule. */
  next_run_at: number | null;
}

/**
 * Creates, replaces or (refresh_days 0) deletes the address's refresh schedule. It fires every `refreshDays` days
 * counted from now (the interval's offset is today's phase, since intervals are otherwise aligned to the epoch) and
 * starts the siteScan workflow, which hands over to `scan/{botId}` with the same pages and path patterns. SKIP: a
 * refresh never queues behind another.
 */
export async function setScanSchedule(
  t: Temporal,
  scan: Omit<SiteScanInput, 'trigger' | 'pageTimeoutMs'> & { refreshDays: number },
): Promise<ScanSchedule> {
  const scheduleId = scanScheduleId(scan.botId, scan.url);
  const handle = t.client.schedule.getHandle(scheduleId);
  if (scan.refreshDays === 0) {
    try {
      await handle.delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    return { refresh_days: 0, next_run_at: null };
  }

  const everyMs = scan.refreshDays * DAY_MS;
  const input: SiteScanInput = {
    botId: scan.botId,
    workspaceId: scan.workspaceId,
    url: scan.url,
    maxPages: scan.maxPages,
    // A re-read keeps the patterns of the request that set the schedule.
    include: scan.include ?? [],
    exclude: scan.exclude ?? [],
    trigger: 'schedule',
  };
  const options: ScheduleUpdateOptions<ScheduleOptionsStartWorkflowAction<typeof siteScanWorkflow>> = {
    spec: { intervals: [{ every: everyMs, offset: Date.now() % everyMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: siteScanWorkflow,
      // Temporal appends the fire time to this id; the run then starts the scan itself as scan/{botId}.
      workflowId: scheduleId,
      taskQueue: t.taskQueue,
      args: [input],
      searchAttributes: siteScanSearchAttributes(input),
    },
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      // A re-read missed while Temporal was down is still worth doing the same day, not a week later in a burst.
      catchupWindow: '1 day',
    },
    state: { paused: false },
  };
  try {
    await t.client.schedule.create({ scheduleId, ...options, memo: { botId: scan.botId, url: scan.url } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    // Scanning the same address again replaces its schedule: new interval, pages, path patterns and phase.
    await handle.update(() => options);
  }
  const description = await handle.describe();
  const next = description.info.nextActionTimes[0];
  return { refresh_days: scan.refreshDays, next_run_at: next ? next.getTime() : null };
}

/** The host of an address for comparing sites: lower-cased, without a leading `www.`; undefined if not a URL. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return undefined;
  }
}
