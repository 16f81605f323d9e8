import { agentRunWorkflow } from '../../workflows/agent-run';
import { errors } from '../errors';
import { newId } from '../ids';
import type { TriggerDeps } from './deps';
import type { TriggerRow } from './store';

/** The shortest interval of schedule and poll triggers (TRIGGER_MIN_INTERVAL_SECONDS): shorter is a 400. */
export function checkInterval(deps: TriggerDeps, every?: number): void {
  if (every !== undefined && every < deps.minIntervalSeconds) {
    throw errors.badRequest(`every_seconds: must be at least ${deps.minIntervalSeconds}`);
  }
}

/**
 * The shortest interval applies to cron too (a seconds field, `@every 1s`, a minute list). Temporal's own reading
 * of the expression is the judge: a probe Schedule, paused and starting in 2100 so it never fires, lists its next
 * ten times, and the smallest gap between them must not be below the minimum. An expression Temporal refuses is a
 * 400 as well.
 */
export async function checkCron(deps: TriggerDeps, cron: string): Promise<void> {
  const handle = await deps.temporal.client.schedule
    .create({
      scheduleId: `trigger-schedule-probe/${newId('trg')}`,
      spec: { cronExpressions: [cron], startAt: new Date('2100-01-01T00:00:00Z') },
      action: {
        type: 'startWorkflow',
        workflowType: agentRunWorkflow,
        taskQueue: deps.temporal.taskQueue,
        args: [{ triggerId: 'probe', triggerKind: 'schedule', botId: 'probe', workspaceId: 'probe', turnTimeoutMs: 0 }],
      },
      state: { paused: true, note: 'probe of a cron expression; deleted at once' },
    })
    .catch((err: unknown) => {
      // The client checks the expression's shape itself (TypeError); the server refuses the rest (INVALID_ARGUMENT).
      if (err instanceof TypeError || (err as { code?: number }).code === 3)
        throw errors.badRequest(`schedule.cron: ${(err as Error).message}`);
      throw err;
    });
  try {
    const times = (await handle.describe()).info.nextActionTimes.map((t) => t.getTime());
    const gaps = times.slice(1).map((t, i) => (t - times[i]) / 1000);
    if (gaps.length && Math.min(...gaps) < deps.minIntervalSeconds) {
      throw errors.badRequest(`schedule.cron: runs more often than every ${deps.minIntervalSeconds} seconds`);
    }
  } finally {
    await handle.delete().catch(() => undefined);
  }
}

/** A poll trigger has no schedule, a schedule trigger no poll address: a field that would be ignored is refused. */
export function checkShape(kind: TriggerRow['kind'], s: { schedule?: unknown; poll?: unknown }): void {
  if (s.schedule !== undefined && kind !== 'schedule')
    throw errors.badRequest(`schedule: a ${kind} trigger has no schedule`);
  if (s.poll !== undefined && kind !== 'poll') throw errors.badRequest(`poll: a ${kind} trigger polls nothing`);
}
