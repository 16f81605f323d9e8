import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import { type SiteScanInput, siteScanSearchAttributes } from '../../workflows/contracts/site-scan';
import { siteScanWorkflow } from '../../workflows/site-scan';
import type { Db } from '../db';
import type { Temporal } from '../temporal';
import type { ScanDeps } from './deps';
import { scanKey } from './sources';

/**
 * An address's refresh Schedule, `scan-refresh/{bot}/{sha1(url)}`: the row says what it should be (`scan_schedules`,
 * with a revision), Temporal is then set to match, and the maintenance workflow converges what lags.
 */

const DAY_MS = 86_400_000;

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
export async function recordWantedSchedule(db: Db, s: WantedSchedule): Promise<number> {
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

export async function markScheduleSynced(db: Db, s: WantedSchedule, rev: number): Promise<void> {
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

/** Sets every refresh Schedule that lags what its address should have (rows older than a minute). */
export async function resyncStale(deps: ScanDeps): Promise<number> {
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
}
