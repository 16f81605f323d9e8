import { bindTo } from '../bind-deps';
import { removeAllOfBot, removeTrigger, setEnabled, updateTrigger } from './changes';
import { createTrigger } from './create';
import type { TriggerDeps } from './deps';
import { receiveHook, reportRunOutcome, runNow } from './runs';
import { resyncSchedule, resyncStale } from './schedules';
import { getTrigger, listTriggers } from './views';

export type { RunStarted } from './runs';

/**
 * Triggers and their runs (contract, Incoming trigger webhook; docs/architecture.md, Workflows): the rows, the Temporal Schedules
 * of schedule and poll triggers (`trigger-schedule/{id}`), the agentRun workflows of webhook and manual runs, and
 * the triggerHealth workflow that counts failed runs. The dashboard, the builder and the hook route call these. Each
 * operation lives in its own module (`create.ts`, `changes.ts`, `views.ts`, `runs.ts`, `schedules.ts`; the checks of
 * intervals and cron expressions in `checks.ts`) as a function of the shared deps (`deps.ts`); here they are given
 * the deps.
 */
export function createTriggerService(deps: TriggerDeps) {
  const bound = bindTo(deps);
  return {
    create: bound(createTrigger),
    list: bound(listTriggers),
    get: bound(getTrigger),
    update: bound(updateTrigger),
    setEnabled: bound(setEnabled),
    remove: bound(removeTrigger),
    removeAllOfBot: bound(removeAllOfBot),
    runNow: bound(runNow),
    receiveHook: bound(receiveHook),
    reportRunOutcome: bound(reportRunOutcome),
    resyncSchedule: bound(resyncSchedule),
    resyncStale: bound(resyncStale),
  };
}

export type TriggerService = ReturnType<typeof createTriggerService>;
