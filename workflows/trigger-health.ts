import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { TriggerActivities } from '../activities/triggers';
import { type RunFinished, type RunReported, runFinishedSignal, runFinishedUpdate } from './contracts/trigger-health';

const REPORTS_BEFORE_CONTINUE_AS_NEW = 1_000;

// Small database writes; retried until they land so a count or a pause is never lost.
const { recordTriggerFailures, pauseTrigger } = proxyActivities<TriggerActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

// The owner's e-mail about a pause is a courtesy beside the notification already recorded: a few tries, then the
// dashboard's notification is what remains (an SMTP outage must not hold the trigger's count back).
const { emailNotification } = proxyActivities<TriggerActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 3, maximumAttempts: 4 },
});

/**
 * Counts a trigger's failed runs in a row (docs/architecture.md, Workflows: `trigger/{triggerId}`). Reports are handled one
 * at a time, in arrival order, so concurrent runs cannot lose a count. A success resets it; the fifth failure pauses
 * the trigger, which stays paused until the owner turns it on again.
 *
 * Runs report with the `runFinished` update and wait for its answer, so a pause is recorded before the failing run
 * ends — the caller of a wait-mode hook that gets the fifth 502 finds the trigger paused on its next call (409).
 * The older `runFinished` signal is still handled the same way, unanswered.
 */
export async function triggerHealthWorkflow(input: { triggerId: string; failures: number }): Promise<void> {
  const { triggerId } = input;
  let failures = input.failures;
  let seen = 0;
  let nextId = 0;
  const pending: { id: number; report: RunFinished }[] = [];
  const answers = new Map<number, RunReported>();
  const emails: string[] = [];

  // Handlers never do the work themselves: they queue, and the main loop handles reports strictly in order.
  setHandler(runFinishedSignal, (report) => {
    pending.push({ id: nextId++, report });
  });
  setHandler(runFinishedUpdate, async (report) => {
    const id = nextId++;
    pending.push({ id, report });
    await condition(() => answers.has(id));
    const answer = answers.get(id)!;
    answers.delete(id);
    return answer;
  });

  async function handle({ id, report }: { id: number; report: RunFinished }): Promise<void> {
    seen++;
    const before = failures;
    failures = report.ok ? 0 : failures + 1;
    let paused = false;
    // Spec, Trigger states: five failed runs in a row pause the trigger (the count comes with each report).
    if (failures >= report.pauseAfter) {
      const { notificationId } = await pauseTrigger({ triggerId, failures });
      if (notificationId) emails.push(notificationId);
      paused = true;
      failures = 0;
    }
    if (failures !== before || failures === 0) await recordTriggerFailures({ triggerId, failures });
    answers.set(id, { failures, paused });
  }

  // Until the history is long enough to start afresh: then only once no report is queued and no update waits.
  for (;;) {
    await condition(
      () =>
        pending.length > 0 || emails.length > 0 || (seen >= REPORTS_BEFORE_CONTINUE_AS_NEW && allHandlersFinished()),
    );
    if (pending.length > 0) {
      await handle(pending.shift()!);
    } else if (emails.length > 0) {
      await emailNotification({ notificationId: emails.shift()! }).catch(() => undefined);
    } else {
      break;
    }
  }
  await continueAsNew<typeof triggerHealthWorkflow>({ triggerId, failures });
}
