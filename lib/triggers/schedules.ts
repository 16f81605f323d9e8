import { ScheduleNotFoundError, ScheduleOverlapPolicy, type ScheduleSpec } from '@temporalio/client';
import { agentRunWorkflow } from '../../workflows/agent-run';
import { agentRunSearchAttributes } from '../../workflows/contracts/agent-run';
import { type ScheduledRunInput, triggerScheduleId } from '../../workflows/contracts/trigger-health';
import type { TriggerDeps } from './deps';
import { type TriggerRow, findTriggerForRun } from './store';

function specOf(t: TriggerRow): ScheduleSpec {
  if (t.schedule_cron) return { cronExpressions: [t.schedule_cron] };
  return { intervals: [{ every: `${t.every_seconds ?? 3600}s` }] };
}

/**
 * Schedule and poll triggers are Temporal Schedules that start agentRun workflows, paused and resumed with their
 * trigger. Called after every change: creates, replaces or deletes the schedule so it matches the row. Overlap
 * SKIP: a run still going is not doubled by the next tick.
 */
async function syncSchedule(deps: TriggerDeps, t: TriggerRow): Promise<void> {
  const handle = deps.temporal.client.schedule.getHandle(triggerScheduleId(t.id));
  if (t.deleted_at || (t.kind !== 'schedule' && t.kind !== 'poll')) {
    await handle.delete().catch((err) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
    return;
  }
  const args: ScheduledRunInput = {
    triggerId: t.id,
    triggerKind: t.kind,
    botId: t.bot_id,
    workspaceId: t.workspace_id,
    turnTimeoutMs: deps.turnTimeoutMs,
  };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: agentRunWorkflow,
    // Temporal appends the scheduled time to this id, so each run has its own workflow.
    workflowId: `run/${t.id}`,
    taskQueue: deps.temporal.taskQueue,
    args: [args] as [ScheduledRunInput],
    searchAttributes: agentRunSearchAttributes({ botId: t.bot_id, workspaceId: t.workspace_id, triggerKind: t.kind }),
  };
  const note = t.enabled
    ? undefined
    : `trigger ${t.disabled_reason === 'failures' ? 'paused after failed runs' : 'turned off'}`;
  try {
    await handle.update((prev) => ({
      ...prev,
      spec: specOf(t),
      action,
      state: { ...prev.state, paused: !t.enabled, note },
    }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await deps.temporal.client.schedule.create({
      scheduleId: triggerScheduleId(t.id),
      spec: specOf(t),
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      state: { paused: !t.enabled, note },
    });
  }
}

/**
 * Makes the Schedule match the row, then records that this revision of the row is in Temporal. A change whose
 * sync failed (Temporal down, a crash between the two writes) stays behind by a revision, and the maintenance
 * workflow converges it (`resyncStale`).
 */
export async function converge(deps: TriggerDeps, t: TriggerRow): Promise<void> {
  await syncSchedule(deps, t);
  await deps.db.query(`UPDATE triggers SET schedule_synced_rev = GREATEST(schedule_synced_rev, $2) WHERE id = $1`, [
    t.id,
    t.schedule_rev,
  ]);
}

/** Makes a trigger's Schedule match its row again (after the health workflow paused the row). */
export async function resyncSchedule(deps: TriggerDeps, triggerId: string): Promise<void> {
  const t = await findTriggerForRun(deps.db, triggerId);
  if (t) await converge(deps, t);
}

/**
 * Converges every trigger whose Schedule lags its row (a sync that failed, or a process that died between the
 * two writes). Rows changed in the last minute are left to the request still syncing them.
 */
export async function resyncStale(deps: TriggerDeps): Promise<number> {
  const res = await deps.db.query<TriggerRow>(
    `SELECT * FROM triggers WHERE schedule_synced_rev < schedule_rev AND updated_at < now() - interval '1 minute'
      ORDER BY updated_at LIMIT 100`,
  );
  for (const t of res.rows) await converge(deps, t);
  return res.rows.length;
}
