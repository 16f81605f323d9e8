import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { TriggerActivities } from '../activities/triggers';
import { type RunFinished, runFinishedSignal } from './messages';

const SIGNALS_BEFORE_CONTINUE_AS_NEW = 1_000;

// Small database writes and one notification; retried until they land so a pause is never lost.
const { recordTriggerFailures, pauseTrigger } = proxyActivities<TriggerActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Counts a trigger's failed runs in a row (DESIGN.md, Workflows: `trigger/{triggerId}`). Signals are handled one
 * at a time, so concurrent runs cannot lose a count. A success resets it; the fifth failure pauses the trigger,
 * which stays paused until the owner turns it on again.
 */
export async function triggerHealthWorkflow(input: { triggerId: string; failures: number }): Promise<void> {
  let failures = input.failures;
  let seen = 0;
  const pending: RunFinished[] = [];

  // Signal handlers never throw and never await: they queue, the main loop does the work in order.
  setHandler(runFinishedSignal, (report) => {
    pending.push(report);
  });

  while (seen < SIGNALS_BEFORE_CONTINUE_AS_NEW) {
    await condition(() => pending.length > 0);
    const { ok, pauseAfter } = pending.shift()!;
    seen++;
    const before = failures;
    failures = ok ? 0 : failures + 1;
    // Spec, Trigger states: five failed runs in a row pause the trigger (the count comes with each report).
    if (failures >= pauseAfter) {
      await pauseTrigger({ triggerId: input.triggerId, failures });
      failures = 0;
    }
    if (failures !== before || failures === 0) await recordTriggerFailures({ triggerId: input.triggerId, failures });
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof triggerHealthWorkflow>({ triggerId: input.triggerId, failures });
}
