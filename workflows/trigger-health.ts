import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { TriggerActivities } from '../activities/triggers';
import { runFinishedSignal } from './messages';

/** Spec, Trigger states: five failed runs in a row pause the trigger. */
export const PAUSE_AFTER_FAILURES = 5;
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
  const pending: { ok: boolean }[] = [];

  // Signal handlers never throw and never await: they queue, the main loop does the work in order.
  setHandler(runFinishedSignal, ({ ok }) => {
    pending.push({ ok });
  });

  while (seen < SIGNALS_BEFORE_CONTINUE_AS_NEW) {
    await condition(() => pending.length > 0);
    const { ok } = pending.shift()!;
    seen++;
    const before = failures;
    failures = ok ? 0 : failures + 1;
    if (failures >= PAUSE_AFTER_FAILURES) {
      await pauseTrigger({ triggerId: input.triggerId, failures });
      failures = 0;
    }
    if (failures !== before || failures === 0) await recordTriggerFailures({ triggerId: input.triggerId, failures });
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof triggerHealthWorkflow>({ triggerId: input.triggerId, failures });
}
