import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { createHash } from 'node:crypto';
import type { Db } from '../lib/db';
import type { SafeFetch } from '../lib/http/safe-fetch';
import type { Mailer } from '../lib/mailer';
import { composeRunInput } from '../lib/triggers';
import {
  runFinishedSignal,
  triggerHealthWorkflowId,
  triggerScheduleId,
} from '../workflows/messages';
import { triggerHealthWorkflow } from '../workflows/trigger-health';

export interface TriggerDeps {
  db: Db;
  fetch: SafeFetch;
  temporalClient: Client;
  taskQueue: string;
  mailer: Mailer | null;
}

/** Largest poll response considered; the content is hashed and handed to the model. */
const POLL_MAX_BYTES = 256 * 1024;


export function createTriggerActivities(deps: TriggerDeps) {
  return {
    /**
     * Decides whether a scheduled or polled wake-up becomes a run, and with which input. A deleted or disabled
     * trigger skips; a poll whose content did not change skips (spec: a run only when the content changed; the
     * first fetch only records the baseline, see docs/decisions.md).
     */
    async beginTriggerRun(input: { triggerId: string }): Promise<{ skip?: string; input?: string }> {
      const res = await deps.db.query<{ kind: string; task: string; enabled: boolean; deleted_at: Date | null; poll_url: string | null; poll_last_hash: string | null }>(
        `SELECT kind, task, enabled, deleted_at, poll_url, poll_last_hash FROM triggers WHERE id = $1`,
        [input.triggerId],
      );
      const t = res.rows[0];
      if (!t || t.deleted_at) return { skip: 'deleted' };
      if (!t.enabled) return { skip: 'disabled' };
      if (t.kind !== 'poll') return { input: composeRunInput(t.task, `Scheduled run at ${new Date().toISOString()}`) };
      let body: string;
      try {
        const r = await deps.fetch(t.poll_url!, { method: 'GET', timeoutMs: 10_000, maxBytes: POLL_MAX_BYTES });
        if (r.status >= 400) throw new Error(`HTTP ${r.status}`);
        body = r.body.toString('utf8');
      } catch (err) {
        // An unreachable address is a failed run: it counts towards pausing the trigger.
        throw ApplicationFailure.nonRetryable(`Poll of the address failed: ${(err as Error).message}`, 'poll_failed');
      }
      const hash = createHash('sha256').update(body).digest('hex');
      const updated = await deps.db.query(
        `UPDATE triggers SET poll_last_hash = $2 WHERE id = $1 AND poll_last_hash IS DISTINCT FROM $2 RETURNING 1`,
        [input.triggerId, hash],
      );
      if (!updated.rowCount) return { skip: 'unchanged' };
      if (t.poll_last_hash === null) return { skip: 'baseline' };
      return { input: composeRunInput(t.task, body) };
    },

    /** Tells the trigger's health workflow how the run ended, starting it on the trigger's first run. */
    async reportTriggerOutcome(input: { triggerId: string; runId: string; ok: boolean }): Promise<void> {
      await deps.temporalClient.workflow.signalWithStart(triggerHealthWorkflow, {
        workflowId: triggerHealthWorkflowId(input.triggerId),
        taskQueue: deps.taskQueue,
        args: [{ triggerId: input.triggerId, failures: 0 }],
        signal: runFinishedSignal,
        signalArgs: [{ runId: input.runId, ok: input.ok }],
      });
    },

    async recordTriggerFailures(input: { triggerId: string; failures: number }): Promise<void> {
      await deps.db.query(`UPDATE triggers SET consecutive_failures = $2 WHERE id = $1`, [input.triggerId, input.failures]);
    },

    /**
     * The fifth failed run in a row: the trigger is paused until turned on by hand, its schedule paused too, and the
     * owner told (a notification, plus e-mail when SMTP is configured). Idempotent: a retry finds it paused.
     */
    async pauseTrigger(input: { triggerId: string; failures: number }): Promise<void> {
      const res = await deps.db.query<{ bot_id: string; workspace_id: string; name: string; kind: string; bot_name: string }>(
        `UPDATE triggers t SET enabled = false, disabled_reason = 'failures', updated_at = now()
           FROM bots b WHERE t.id = $1 AND b.id = t.bot_id AND t.deleted_at IS NULL
         RETURNING t.bot_id, t.workspace_id, t.name, t.kind, b.name AS bot_name`,
        [input.triggerId],
      );
      const t = res.rows[0];
      if (!t) return;
      if (t.kind === 'schedule' || t.kind === 'poll') {
        await deps.temporalClient.schedule
          .getHandle(triggerScheduleId(input.triggerId))
          .pause(`paused after ${input.failures} failed runs in a row`)
          .catch(() => undefined);
      }
      const title = `Trigger "${t.name}" of ${t.bot_name} was paused`;
      const body = `Its last ${input.failures} runs failed in a row, so it was paused to stop spending credits. Check the run log, fix the cause, and turn the trigger on again.`;
      const notificationId = `ntf_pause_${input.triggerId}_${Date.now().toString(36)}`;
      await deps.db.query(
        `INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data) VALUES ($1, $2, $3, 'trigger_paused', $4, $5, $6)`,
        [notificationId, t.workspace_id, t.bot_id, title, body, JSON.stringify({ trigger_id: input.triggerId, failures: input.failures })],
      );
      if (deps.mailer) {
        const owner = await deps.db.query<{ email: string }>(`SELECT email FROM users WHERE workspace_id = $1 AND role = 'owner' LIMIT 1`, [t.workspace_id]);
        if (owner.rows[0]) {
          await deps.mailer.send(owner.rows[0].email, title, body);
          await deps.db.query(`UPDATE notifications SET emailed_at = now() WHERE id = $1`, [notificationId]);
        }
      }
    },
  };
}

export type TriggerActivities = ReturnType<typeof createTriggerActivities>;
