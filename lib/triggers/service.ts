import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
  WithStartWorkflowOperation,
  WorkflowFailedError,
} from '@temporalio/client';
import { createHmac } from 'node:crypto';
import { agentRunWorkflow } from '../../workflows/agent-run';
import { type AgentRunInput, agentRunSearchAttributes, runWorkflowId } from '../../workflows/contracts/agent-run';
import {
  type ScheduledRunInput,
  runFinishedUpdate,
  triggerHealthWorkflowId,
  triggerScheduleId,
} from '../../workflows/contracts/trigger-health';
import { triggerHealthWorkflow } from '../../workflows/trigger-health';
import type { Db } from '../db';
import { ApiError, errors, isUnavailableError } from '../errors';
import { newId } from '../ids';
import { constantTimeEqual, fingerprint, generateKey } from '../keys';
import { LIMITS } from '../limits';
import type { SecretBox } from '../secret-box';
import { type Temporal, waitThroughOutage } from '../temporal';
import { type TriggerRow, composeRunInput, findTrigger, findTriggerForRun, signalText } from './store';

export interface TriggerServiceDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  turnTimeoutMs: number;
  /** Shortest interval of schedule and poll triggers (TRIGGER_MIN_INTERVAL_SECONDS). */
  minIntervalSeconds: number;
}

export interface TriggerSettings {
  kind: TriggerRow['kind'];
  name?: string;
  task: string;
  mode: 'ack' | 'wait';
  enabled: boolean;
  schedule?: { cron?: string; every_seconds?: number };
  poll?: { url: string; every_seconds: number };
}

export type TriggerPatch = Partial<Omit<TriggerSettings, 'kind' | 'enabled'>>;

/** How a run a trigger started ended for its caller: acknowledged at once, or waited for (spec, Incoming trigger webhook). */
export type RunStarted = { mode: 'ack'; run_id: string } | { mode: 'wait'; run_id: string; answer: string };

/** A trigger as the dashboard (and the builder) show it; the secret appears only in the creation's answer. */
function view(t: TriggerRow, baseUrl: string) {
  return {
    id: t.id,
    bot_id: t.bot_id,
    kind: t.kind,
    name: t.name,
    task: t.task,
    mode: t.mode,
    enabled: t.enabled,
    disabled_reason: t.disabled_reason,
    consecutive_failures: t.consecutive_failures,
    hook_url: t.kind === 'webhook' ? `${baseUrl.replace(/\/$/, '')}/v1/hooks/${t.id}` : null,
    secret_fingerprint: t.secret_fingerprint,
    schedule: t.kind === 'schedule' ? { cron: t.schedule_cron, every_seconds: t.every_seconds } : null,
    poll: t.kind === 'poll' ? { url: t.poll_url!, every_seconds: t.every_seconds } : null,
    created_at: t.created_at.getTime(),
  };
}

export type TriggerView = ReturnType<typeof view>;

function specOf(t: TriggerRow): ScheduleSpec {
  if (t.schedule_cron) return { cronExpressions: [t.schedule_cron] };
  return { intervals: [{ every: `${t.every_seconds ?? 3600}s` }] };
}

/**
 * Triggers and their runs (spec, Incoming trigger webhook; docs/architecture.md, Workflows): the rows, the Temporal Schedules
 * of schedule and poll triggers (`trigger-schedule/{id}`), the agentRun workflows of webhook and manual runs, and
 * the triggerHealth workflow that counts failed runs. The dashboard, the builder and the hook route call these.
 */
export function createTriggerService(deps: TriggerServiceDeps) {
  /**
   * Schedule and poll triggers are Temporal Schedules that start agentRun workflows, paused and resumed with their
   * trigger. Called after every change: creates, replaces or deletes the schedule so it matches the row. Overlap
   * SKIP: a run still going is not doubled by the next tick.
   */
  async function syncSchedule(t: TriggerRow): Promise<void> {
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
  async function converge(t: TriggerRow): Promise<void> {
    await syncSchedule(t);
    await deps.db.query(`UPDATE triggers SET schedule_synced_rev = GREATEST(schedule_synced_rev, $2) WHERE id = $1`, [
      t.id,
      t.schedule_rev,
    ]);
  }

  function checkInterval(every?: number): void {
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
  async function checkCron(cron: string): Promise<void> {
    const handle = await deps.temporal.client.schedule
      .create({
        scheduleId: `trigger-schedule-probe/${newId('trg')}`,
        spec: { cronExpressions: [cron], startAt: new Date('2100-01-01T00:00:00Z') },
        action: {
          type: 'startWorkflow',
          workflowType: agentRunWorkflow,
          taskQueue: deps.temporal.taskQueue,
          args: [
            { triggerId: 'probe', triggerKind: 'schedule', botId: 'probe', workspaceId: 'probe', turnTimeoutMs: 0 },
          ],
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
  function checkShape(kind: TriggerRow['kind'], s: { schedule?: unknown; poll?: unknown }): void {
    if (s.schedule !== undefined && kind !== 'schedule')
      throw errors.badRequest(`schedule: a ${kind} trigger has no schedule`);
    if (s.poll !== undefined && kind !== 'poll') throw errors.badRequest(`poll: a ${kind} trigger polls nothing`);
  }

  async function load(botId: string, triggerId: string): Promise<TriggerRow> {
    const t = await findTrigger(deps.db, triggerId, botId);
    if (!t) throw errors.notFound('No such trigger');
    return t;
  }

  /** Starts a run of a trigger; with `wait`, waits for its result (spec, Incoming trigger webhook table). */
  async function startRun(t: TriggerRow, kind: 'webhook' | 'manual', body: string): Promise<RunStarted> {
    const runId = newId('run');
    // Spec: in wait mode the caller reads the answer, so the agent sees none of the owner's private data.
    const callerReads = kind === 'webhook' && t.mode === 'wait';
    const input: AgentRunInput = {
      runId,
      botId: t.bot_id,
      workspaceId: t.workspace_id,
      triggerKind: kind,
      triggerId: t.id,
      input: composeRunInput(t.task, body),
      turnTimeoutMs: deps.turnTimeoutMs,
      withTools: true,
      ownerContext: !callerReads,
      role: callerReads ? 'visitor' : 'admin',
    };
    const handle = await deps.temporal.client.workflow.start(agentRunWorkflow, {
      workflowId: runWorkflowId(runId),
      taskQueue: deps.temporal.taskQueue,
      args: [input],
      searchAttributes: agentRunSearchAttributes(input),
    });
    if (t.mode === 'ack') return { mode: 'ack', run_id: runId };
    const waitMs = deps.turnTimeoutMs + 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        // The run goes on in its worker while Temporal is away: its result is asked for again until the wait ends.
        waitThroughOutage(() => handle.result(), Date.now() + waitMs),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), waitMs);
        }),
      ]);
      return { mode: 'wait', run_id: runId, answer: result.answer };
    } catch (err) {
      // Temporal still out of reach at the end: 503, as for any request that needs it (the run may yet finish).
      if (isUnavailableError(err)) throw err;
      const reason =
        err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : 'the run did not finish in time';
      throw new ApiError('run_failed', `The run failed: ${reason}. See the run log.`, { run_id: runId });
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /** Creates a trigger; a webhook trigger's address and secret are in this answer only. */
    async create(
      bot: { id: string; workspace_id: string },
      s: TriggerSettings,
      baseUrl: string,
    ): Promise<TriggerView & { secret?: string }> {
      checkShape(s.kind, s);
      checkInterval(s.schedule?.every_seconds ?? s.poll?.every_seconds);
      if (s.schedule?.cron) await checkCron(s.schedule.cron);
      const id = newId('trg');
      const secret = s.kind === 'webhook' ? generateKey('trigger') : undefined;
      const res = await deps.db.query<TriggerRow>(
        `INSERT INTO triggers (id, bot_id, workspace_id, kind, name, task, mode, enabled, disabled_reason, secret_sealed, secret_fingerprint,
                               schedule_cron, every_seconds, poll_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
        [
          id,
          bot.id,
          bot.workspace_id,
          s.kind,
          s.name ?? `${s.kind} trigger`,
          s.task,
          s.mode,
          s.enabled,
          s.enabled ? null : 'owner',
          secret ? deps.secrets.seal(secret) : null,
          secret ? fingerprint(secret) : null,
          s.schedule?.cron ?? null,
          s.schedule?.every_seconds ?? s.poll?.every_seconds ?? null,
          s.poll?.url ?? null,
        ],
      );
      const t = res.rows[0];
      try {
        await converge(t);
      } catch (err) {
        // The schedule is part of the trigger: without it, no trigger (an invalid cron lands here).
        await deps.db.query(`DELETE FROM triggers WHERE id = $1`, [id]);
        if ((err as { code?: number }).code === 3 /* INVALID_ARGUMENT */)
          throw errors.badRequest(`schedule: ${(err as Error).message}`);
        throw err;
      }
      return { ...view(t, baseUrl), ...(secret ? { secret } : {}) };
    },

    async list(botId: string, baseUrl: string): Promise<TriggerView[]> {
      const res = await deps.db.query<TriggerRow>(
        `SELECT * FROM triggers WHERE bot_id = $1 AND deleted_at IS NULL ORDER BY created_at`,
        [botId],
      );
      return res.rows.map((t) => view(t, baseUrl));
    },

    async get(botId: string, triggerId: string, baseUrl: string): Promise<TriggerView> {
      return view(await load(botId, triggerId), baseUrl);
    },

    /** Changes name, task, mode, schedule or poll settings; the schedule follows. */
    async update(botId: string, triggerId: string, p: TriggerPatch, baseUrl: string): Promise<TriggerView> {
      const t = await load(botId, triggerId);
      checkShape(t.kind, p);
      checkInterval(p.schedule?.every_seconds ?? p.poll?.every_seconds);
      if (p.schedule?.cron) await checkCron(p.schedule.cron);
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET name = COALESCE($2, name), task = COALESCE($3, task), mode = COALESCE($4, mode),
                schedule_cron = CASE WHEN $5::boolean THEN $6 ELSE schedule_cron END,
                every_seconds = COALESCE($7, every_seconds), poll_url = COALESCE($8, poll_url),
                poll_last_hash = CASE WHEN $8::text IS NOT NULL AND $8 IS DISTINCT FROM poll_url THEN NULL ELSE poll_last_hash END,
                schedule_rev = schedule_rev + 1, updated_at = now()
          WHERE id = $1 RETURNING *`,
        [
          t.id,
          p.name ?? null,
          p.task ?? null,
          p.mode ?? null,
          p.schedule !== undefined,
          p.schedule?.cron ?? null,
          p.schedule?.every_seconds ?? p.poll?.every_seconds ?? null,
          p.poll?.url ?? null,
        ],
      );
      await converge(res.rows[0]);
      return view(res.rows[0], baseUrl);
    },

    /** Turns a trigger on (also after a pause for failed runs: the count starts again) or off; its schedule follows. */
    async setEnabled(botId: string, triggerId: string, enabled: boolean, baseUrl: string): Promise<TriggerView> {
      const t = await load(botId, triggerId);
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET enabled = $2, disabled_reason = $3, consecutive_failures = CASE WHEN $2 THEN 0 ELSE consecutive_failures END,
                schedule_rev = schedule_rev + 1, updated_at = now() WHERE id = $1 RETURNING *`,
        [t.id, enabled, enabled ? null : 'owner'],
      );
      await converge(res.rows[0]);
      return view(res.rows[0], baseUrl);
    },

    /** Deletes a trigger: its hook answers 404 and its schedule is removed. */
    async remove(botId: string, triggerId: string): Promise<{ status: 'deleted'; id: string }> {
      const t = await load(botId, triggerId);
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET deleted_at = now(), enabled = false, schedule_rev = schedule_rev + 1, updated_at = now()
          WHERE id = $1 RETURNING *`,
        [t.id],
      );
      await converge(res.rows[0]);
      return { status: 'deleted', id: t.id };
    },

    /** Deletes every trigger of a bot (the bot is being deleted): hooks answer 404, Schedules are removed. */
    async removeAllOfBot(botId: string): Promise<number> {
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET deleted_at = now(), enabled = false, schedule_rev = schedule_rev + 1, updated_at = now()
          WHERE bot_id = $1 AND deleted_at IS NULL RETURNING *`,
        [botId],
      );
      for (const row of res.rows) await converge(row);
      return res.rows.length;
    },

    /** A manual start: one run now, answered as the trigger's webhook would be. */
    async runNow(botId: string, triggerId: string, body: string | undefined): Promise<RunStarted> {
      const t = await load(botId, triggerId);
      if (!t.enabled) throw new ApiError('trigger_disabled', 'The trigger is off; turn it on first');
      return startRun(t, 'manual', body ?? 'Manual start from the dashboard');
    },

    /**
     * `POST /v1/hooks/{tid}`: the signature is HMAC-SHA256 of the raw body with the trigger's secret, compared in
     * constant time; then 404 for an unknown or deleted trigger and 409 for a disabled one (spec's table).
     */
    async receiveHook(triggerId: string, rawBody: Buffer, signature: string): Promise<RunStarted> {
      const t = await findTrigger(deps.db, triggerId);
      if (!t || t.kind !== 'webhook' || !t.secret_sealed) throw errors.notFound('No such trigger');
      const expected = `sha256=${createHmac('sha256', deps.secrets.open(t.secret_sealed)).update(rawBody).digest('hex')}`;
      if (!constantTimeEqual(signature, expected))
        throw new ApiError('invalid_signature', 'Missing or invalid X-Hook-Signature');
      if (!t.enabled) {
        throw new ApiError(
          'trigger_disabled',
          t.disabled_reason === 'failures' ? 'The trigger was paused after failed runs' : 'The trigger is turned off',
        );
      }
      return startRun(t, 'webhook', signalText(rawBody));
    },

    /**
     * Tells the trigger's health workflow how a run ended (starting it on the trigger's first run) and waits until
     * the report is counted: a fifth failure's pause is recorded before the failing run ends (spec, Trigger states).
     * The update id is the run's, so a retried report is counted once.
     */
    async reportRunOutcome(input: { triggerId: string; runId: string; ok: boolean }): Promise<void> {
      await deps.temporal.client.workflow.executeUpdateWithStart(runFinishedUpdate, {
        args: [{ runId: input.runId, ok: input.ok, pauseAfter: LIMITS.triggerPauseAfterFailures }],
        updateId: `report/${input.runId}`,
        startWorkflowOperation: new WithStartWorkflowOperation(triggerHealthWorkflow, {
          workflowId: triggerHealthWorkflowId(input.triggerId),
          taskQueue: deps.temporal.taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ triggerId: input.triggerId, failures: 0 }],
        }),
      });
    },

    /** Makes a trigger's Schedule match its row again (after the health workflow paused the row). */
    async resyncSchedule(triggerId: string): Promise<void> {
      const t = await findTriggerForRun(deps.db, triggerId);
      if (t) await converge(t);
    },

    /**
     * Converges every trigger whose Schedule lags its row (a sync that failed, or a process that died between the
     * two writes). Rows changed in the last minute are left to the request still syncing them.
     */
    async resyncStale(): Promise<number> {
      const res = await deps.db.query<TriggerRow>(
        `SELECT * FROM triggers WHERE schedule_synced_rev < schedule_rev AND updated_at < now() - interval '1 minute'
          ORDER BY updated_at LIMIT 100`,
      );
      for (const t of res.rows) await converge(t);
      return res.rows.length;
    },
  };
}

export type TriggerService = ReturnType<typeof createTriggerService>;
