import { Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import type { Mailer } from '../lib/mailer';
import { emailNotification, notify } from '../lib/notifications/service';
import {
  type TriggerRuntime,
  composeRunInput,
  findTriggerForRun,
  pauseTriggerForFailures,
  recordPollHash,
  recordTriggerFailures,
  signalText,
} from '../lib/triggers/store';
import { failure } from '../workflows/failures';

export interface TriggerDeps {
  db: Db;
  fetch: SafeFetch;
  mailer: Mailer | null;
  /** The trigger service's Temporal side (health reports, Schedules), injected by the worker. */
  triggers: TriggerRuntime;
}

/** Largest poll response considered; the content is hashed and handed to the model. */
const POLL_MAX_BYTES = 256 * 1024;
const POLL_TIMEOUT_MS = 10_000;

export function createTriggerActivities(deps: TriggerDeps) {
  return {
    /**
     * Decides whether a scheduled or polled wake-up becomes a run, and with which input. A deleted or disabled
     * trigger skips; a poll whose content did not change skips (contract: a run only when the content changed; the
     * first fetch only records the baseline, see docs/decisions/045-schedules-and-polls.md).
     */
    async beginTriggerRun(input: { triggerId: string }): Promise<{ skip?: string; input?: string }> {
      const t = await findTriggerForRun(deps.db, input.triggerId);
      if (!t || t.deleted_at) return { skip: 'deleted' };
      if (!t.enabled) return { skip: 'disabled' };
      if (t.kind !== 'poll') return { input: composeRunInput(t.task, `Scheduled run at ${new Date().toISOString()}`) };
      let body: string;
      try {
        const r = await deps.fetch(t.poll_url!, {
          method: 'GET',
          timeoutMs: POLL_TIMEOUT_MS,
          maxBytes: POLL_MAX_BYTES,
        });
        if (r.status >= 400) throw new Error(`HTTP ${r.status}`);
        body = signalText(r.body);
      } catch (err) {
        // An unreachable address is a failed run: it counts towards pausing the trigger.
        throw failure('poll_failed', `Poll of the address failed: ${(err as Error).message}`);
      }
      const hash = createHash('sha256').update(body).digest('hex');
      if (!(await recordPollHash(deps.db, input.triggerId, hash))) return { skip: 'unchanged' };
      if (t.poll_last_hash === null) return { skip: 'baseline' };
      return { input: composeRunInput(t.task, body) };
    },

    /** Tells the trigger's health workflow how the run ended, starting it on the trigger's first run. */
    reportTriggerOutcome(input: { triggerId: string; runId: string; ok: boolean }): Promise<void> {
      return deps.triggers.reportRunOutcome(input);
    },

    recordTriggerFailures(input: { triggerId: string; failures: number }): Promise<void> {
      return recordTriggerFailures(deps.db, input.triggerId, input.failures);
    },

    /**
     * The fifth failed run in a row: the trigger is paused until turned on by hand, its schedule paused too, and the
     * owner told with a notification (e-mailed afterwards by `emailNotification`). Safe to retry: a retry finds the
     * trigger paused, and the notification's id is this activity's own, so one pause makes one notification.
     */
    async pauseTrigger(input: { triggerId: string; failures: number }): Promise<{ notificationId: string | null }> {
      const t = await pauseTriggerForFailures(deps.db, input.triggerId);
      if (!t) return { notificationId: null };
      await deps.triggers.resyncSchedule(input.triggerId);
      const info = Context.current().info;
      const notificationId = `ntf_pause_${input.triggerId}_${info.workflowExecution?.runId ?? 'run'}_${info.activityId}`;
      await notify(deps.db, {
        id: notificationId,
        workspaceId: t.workspace_id,
        botId: t.bot_id,
        kind: 'trigger_paused',
        title: `Trigger "${t.name}" of ${t.bot_name} was paused`,
        body: `Its last ${input.failures} runs failed in a row, so it was paused to stop spending credits. Check the run log, fix the cause, and turn the trigger on again.`,
        data: { trigger_id: input.triggerId, failures: input.failures },
      });
      return { notificationId };
    },

    /** E-mails a notification to the owner when SMTP is configured (once; a failure is retried a few times). */
    async emailNotification(input: { notificationId: string }): Promise<{ emailed: boolean }> {
      if (!deps.mailer) return { emailed: false };
      return { emailed: await emailNotification(deps.db, deps.mailer, input.notificationId) };
    },
  };
}

export type TriggerActivities = ReturnType<typeof createTriggerActivities>;
