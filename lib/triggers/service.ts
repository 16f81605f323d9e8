import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
  WorkflowFailedError,
} from '@temporalio/client';
import { createHmac } from 'node:crypto';
import { agentRunWorkflow } from '../../workflows/agent-run';
import {
  type AgentRunInput,
  type ScheduledRunInput,
  agentRunSearchAttributes,
  runFinishedSignal,
  runWorkflowId,
  triggerHealthWorkflowId,
  triggerScheduleId,
} from '../../workflows/messages';
import { triggerHealthWorkflow } from '../../workflows/trigger-health';
import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { constantTimeEqual, fingerprint, generateKey } from '../keys';
import { LIMITS } from '../limits';
import type { SecretBox } from '../secret-box';
import type { Temporal } from '../temporal';
import { type TriggerRow, composeRunInput, findTrigger } from './store';

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
 * Triggers and their runs (spec, Incoming trigger webhook; DESIGN.md, Workflows): the rows, the Temporal Schedules
 * of schedule and poll triggers (`trigger-schedule/{id}`), the agentRun workflows of webhook and manual runs, and
 * the triggerHealth workflow that counts failed runs. The dashboard, the builder and the hook route call these.
 */
export function createTriggerService(deps: TriggerServiceDeps) {
  /**
   * Schedule and poll triggers are Temporal Schedules that start agentRun workflows, paused and resumed with their
   * trigger. Called after every change: creates, replaces or deletes the schedule so it matches the row. Overlap
   * SKIP: a run still going is not doubled by the next tick.
   */
  async function syncSchedule(t: TriggerRow, opts: { deleted?: boolean } = {}): Promise<void> {
    const handle = deps.temporal.client.schedule.getHandle(triggerScheduleId(t.id));
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

  function checkInterval(every?: number): void {
    if (every !== undefined && every < deps.minIntervalSeconds) {
      throw errors.badRequest(`every_seconds: must be at least ${deps.minIntervalSeconds}`);
    }
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
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        handle.result(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), deps.turnTimeoutMs + 30_000);
        }),
      ]);
      return { mode: 'wait', run_id: runId, answer: result.answer };
    } catch (err) {
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
      checkInterval(s.schedule?.every_seconds ?? s.poll?.every_seconds);
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
        await syncSchedule(t);
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
      checkInterval(p.schedule?.every_seconds ?? p.poll?.every_seconds);
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET name = COALESCE($2, name), task = COALESCE($3, task), mode = COALESCE($4, mode),
                schedule_cron = CASE WHEN $5::boolean THEN $6 ELSE schedule_cron END,
                every_seconds = COALESCE($7, every_seconds), poll_url = COALESCE($8, poll_url),
                poll_last_hash = CASE WHEN $8::text IS NOT NULL AND $8 IS DISTINCT FROM poll_url THEN NULL ELSE poll_last_hash END,
                updated_at = now()
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
      await syncSchedule(res.rows[0]);
      return view(res.rows[0], baseUrl);
    },

    /** Turns a trigger on (also after a pause for failed runs: the count starts again) or off; its schedule follows. */
    async setEnabled(botId: string, triggerId: string, enabled: boolean, baseUrl: string): Promise<TriggerView> {
      const t = await load(botId, triggerId);
      const res = await deps.db.query<TriggerRow>(
        `UPDATE triggers SET enabled = $2, disabled_reason = $3, consecutive_failures = CASE WHEN $2 THEN 0 ELSE consecutive_failures END,
                updated_at = now() WHERE id = $1 RETURNING *`,
        [t.id, enabled, enabled ? null : 'owner'],
      );
      await syncSchedule(res.rows[0]);
      return view(res.rows[0], baseUrl);
    },

    /** Deletes a trigger: its hook answers 404 and its schedule is removed. */
    async remove(botId: string, triggerId: string): Promise<{ status: 'deleted'; id: string }> {
      const t = await load(botId, triggerId);
      await deps.db.query(`UPDATE triggers SET deleted_at = now(), enabled = false WHERE id = $1`, [t.id]);
      await syncSchedule(t, { deleted: true });
      return { status: 'deleted', id: t.id };
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
      // The body is handed to the model as text; bytes that are not UTF-8 become replacement characters.
      return startRun(t, 'webhook', rawBody.toString('utf8'));
    },

    /** Tells the trigger's health workflow how a run ended, starting it on the trigger's first run. */
    async reportRunOutcome(input: { triggerId: string; runId: string; ok: boolean }): Promise<void> {
      await deps.temporal.client.workflow.signalWithStart(triggerHealthWorkflow, {
        workflowId: triggerHealthWorkflowId(input.triggerId),
        taskQueue: deps.temporal.taskQueue,
        args: [{ triggerId: input.triggerId, failures: 0 }],
        signal: runFinishedSignal,
        signalArgs: [{ runId: input.runId, ok: input.ok, pauseAfter: LIMITS.triggerPauseAfterFailures }],
      });
    },

    /** Pauses a schedule or poll trigger's Schedule (the row is paused by the health workflow's activity). */
    async pauseSchedule(triggerId: string, note: string): Promise<void> {
      await deps.temporal.client.schedule
        .getHandle(triggerScheduleId(triggerId))
        .pause(note)
        .catch((err) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
    },
  };
}

export type TriggerService = ReturnType<typeof createTriggerService>;
