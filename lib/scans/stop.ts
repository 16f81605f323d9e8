import { WorkflowNotFoundError } from '@temporalio/client';
import { siteScanWorkflowId } from '../../workflows/contracts/site-scan';
import { ApiError } from '../errors';
import type { ScanDeps } from './deps';
import { setScanSchedule } from './schedules';
import { runningScan } from './workflow';

/** Stopping scans: the one running now (the dashboard's "Stop"), or everything of a bot being deleted. */

/**
 * Stops everything scanning does for a bot (the bot is being deleted): its refresh Schedules are deleted and a scan
 * in progress is terminated (its writes would find the bot gone).
 */
export async function stopAllOfBot(deps: ScanDeps, botId: string): Promise<void> {
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
}

/**
 * Stops the bot's running scan (409 `conflict` when none runs): its workflow is cancelled, the crawl stops before
 * its next request, and the scan is recorded as `cancelled` (pages of an earlier scan stay; the refresh schedule
 * is kept). Answers at once: the row says `cancelled` a moment later.
 */
export async function cancelScan(
  deps: ScanDeps,
  botId: string,
): Promise<{ status: 'cancelling'; workflow_id: string }> {
  const workflowId = siteScanWorkflowId(botId);
  if (!(await runningScan(deps.temporal, botId))) {
    throw new ApiError('conflict', 'No site scan of this bot is running');
  }
  await deps.temporal.client.workflow
    .getHandle(workflowId)
    .cancel()
    .catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) throw new ApiError('conflict', 'No site scan of this bot is running');
      throw err;
    });
  return { status: 'cancelling', workflow_id: workflowId };
}
