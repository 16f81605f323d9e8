import type { Queryable } from '../../db';
import { LIMITS } from '../../limits';
import { type AgentFacts, type Incident, type TriggerIncidentDetails, lastError, ms, quote } from './kinds';

interface TriggerStreak {
  id: string;
  name: string;
  kind: TriggerIncidentDetails['trigger_kind'];
  enabled: boolean;
  failures: number;
  updated_at: Date;
  last_run_id: string | null;
  last_error: string | null;
  last_failed_at: Date | null;
  streak_started_at: Date | null;
}

/** Paused after failed runs, or failing towards the pause; with the last failed run and when the streak began. */
export async function readTriggerStreaks(db: Queryable, agentId: string): Promise<TriggerStreak[]> {
  const res = await db.query<TriggerStreak>(
    `SELECT t.id, t.name, t.kind, t.enabled, t.consecutive_failures AS failures, t.updated_at,
            last.id AS last_run_id, last.error AS last_error, last.at AS last_failed_at, streak.at AS streak_started_at
       FROM triggers t
       LEFT JOIN LATERAL (
         SELECT r.id, r.error, COALESCE(r.finished_at, r.started_at) AS at FROM runs r
          WHERE r.bot_id = t.bot_id AND r.trigger_id = t.id AND r.status = 'failed'
          ORDER BY r.started_at DESC, r.id DESC LIMIT 1) last ON true
       LEFT JOIN LATERAL (
         SELECT min(s.started_at) AS at FROM (
           SELECT r.started_at FROM runs r
            WHERE r.bot_id = t.bot_id AND r.trigger_id = t.id AND r.status = 'failed'
            ORDER BY r.started_at DESC LIMIT GREATEST(t.consecutive_failures, 1)) s) streak ON true
      WHERE t.bot_id = $1 AND t.deleted_at IS NULL
        AND ((NOT t.enabled AND t.disabled_reason = 'failures') OR (t.enabled AND t.consecutive_failures > 0))
      ORDER BY t.created_at, t.id`,
    [agentId],
  );
  return res.rows;
}

/**
 * `trigger_paused` (off with `disabled_reason = failures`; since its last failed run) and `trigger_failing` (on, with
 * failed runs in a row before the pause): one statement finds both, with the same details.
 */
export function triggerIncidents(bot: AgentFacts, triggers: TriggerStreak[]): Incident[] {
  const pauseAfter = LIMITS.triggerPauseAfterFailures;
  return triggers.map((t): Incident => {
    const details: TriggerIncidentDetails = {
      trigger_id: t.id,
      trigger_name: t.name,
      trigger_kind: t.kind,
      // The health workflow starts its count from zero when it pauses (workflows/trigger-health.ts): a paused
      // trigger's row says 0, and what paused it was the limit reached.
      failures: t.enabled ? t.failures : pauseAfter,
      pause_after: pauseAfter,
      last_run_id: t.last_run_id,
      last_error: t.last_error,
    };
    if (!t.enabled) {
      return {
        kind: 'trigger_paused',
        severity: 'blocking',
        problem:
          `The ${t.kind} trigger ${quote(t.name)} was paused after ${details.failures} failed runs in a row, so it no ` +
          `longer wakes ${bot.name}` +
          (t.kind === 'webhook' ? ' (calls to its address are turned away).' : '.') +
          lastError(t.last_error),
        fix:
          'Fix what made the runs fail (see the last error and the run log), then ask me to turn the trigger on ' +
          'again; turning it on starts the failure count from zero.',
        builder_can_fix: true,
        // The run that paused it was its last failed one: a paused trigger does not run.
        since: ms(t.last_failed_at ?? t.updated_at),
        details,
      };
    }
    return {
      kind: 'trigger_failing',
      severity: 'warning',
      problem:
        `The last ${t.failures} run(s) of the ${t.kind} trigger ${quote(t.name)} failed; after ${pauseAfter} ` +
        `failures in a row it will be paused.${lastError(t.last_error)}`,
      fix:
        "Look at the last error and the run log. If the trigger's task or settings are the cause, ask me to " +
        'change them; a successful run resets the count.',
      builder_can_fix: false,
      since: ms(t.streak_started_at),
      details,
    };
  });
}
