import { ScheduleNotFoundError, ScheduleOverlapPolicy, type ScheduleSpec } from '@temporalio/client';
import type { Queryable } from './db';
import type { Temporal } from './temporal';
import { agentRunSearchAttributes, agentRunWorkflow } from '../workflows/agent-run';
import { TRIGGER_BODY_LINE, type ScheduledRunInput, triggerScheduleId } from '../workflows/messages';

/** Spec, Incoming trigger call: the run task text, then the platform's fixed line, then the raw body. */
export function composeRunInput(task: string, body: string): string {
  return `${task}\n\n${TRIGGER_BODY_LINE}\n${body}`;
}

export interface TriggerRow {
  id: string;
  bot_id: string;
  workspace_id: string;
  kind: 'webhook' | 'schedule' | 'poll' | 'manual';
  name: string;
  task: string;
  mode: 'ack' | 'wait';
  enabled: boolean;
  disabled_reason: string | null;
  secret_sealed: string | null;
  secret_fingerprint: string | null;
  schedule_cron: string | null;
  every_seconds: number | null;
  poll_url: string | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

export async function findTrigger(db: Queryable, id: string, botId?: string): Promise<TriggerRow | null> {
  const res = await db.query<TriggerRow>(
    `SELECT * FROM triggers WHERE id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR bot_id = $2)`,
    [id, botId ?? null],
  );
  return res.rows[0] ?? null;
}

function specOf(t: TriggerRow): ScheduleSpec {
  if (t.schedule_cron) return { cronExpressions: [t.schedule_cron] };
  return { intervals: [{ every: `${t.every_seconds ?? 3600}s` }] };
}

/**
 * Schedule and poll triggers are Temporal Schedules (`trigger-schedule/{id}`) that start agentRun workflows,
 * paused and resumed with their trigger. Called after every change: creates, replaces or deletes the schedule so it
 * matches the row. Overlap SKIP: a run still going is not doubled by the next tick.
 */
export async function syncTriggerSchedule(temporal: Temporal, t: TriggerRow, opts: { deleted?: boolean; turnTimeoutMs: number }): Promise<void> {
  const id = triggerScheduleId(t.id);
  const handle = temporal.client.schedule.getHandle(id);
  if (opts.deleted || (t.kind !== 'schedule' && t.kind !== 'poll')) {
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
    turnTimeoutMs: opts.turnTimeoutMs,
  };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: agentRunWorkflow,
    // Temporal appends the scheduled time to this id, so each run has its own workflow.
    workflowId: `run/${t.id}`,
    taskQueue: temporal.taskQueue,
    args: [args] as [ScheduledRunInput],
    searchAttributes: agentRunSearchAttributes({ botId: t.bot_id, workspaceId: t.workspace_id, triggerKind: t.kind }),
  };
  const note = t.enabled ? undefined : `trigger ${t.disabled_reason === 'failures' ? 'paused after failed runs' : 'turned off'}`;
  try {
    await handle.update((prev) => ({ ...prev, spec: specOf(t), action, state: { ...prev.state, paused: !t.enabled, note } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await temporal.client.schedule.create({
      scheduleId: id,
      spec: specOf(t),
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      state: { paused: !t.enabled, note },
    });
  }
}
