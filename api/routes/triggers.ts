import { WorkflowFailedError } from '@temporalio/client';
import { createHmac } from 'node:crypto';
import { ApiError, errors } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { constantTimeEqual, fingerprint, generateKey } from '../../lib/keys';
import { LIMITS } from '../../lib/limits';
import { type TriggerRow, composeRunInput, findTrigger, syncTriggerSchedule } from '../../lib/triggers';
import { agentRunSearchAttributes, agentRunWorkflow } from '../../workflows/agent-run';
import { type AgentRunInput, runWorkflowId } from '../../workflows/messages';
import type { AppDeps } from '../app';
import type { AppContext } from '../context';
import type { RouteDef } from '../route';
import { BotParams } from '../schemas/dashboard';
import {
  HookAccepted,
  HookDone,
  HookParams,
  ManualRun,
  TriggerCreate,
  TriggerCreated,
  TriggerList,
  TriggerParams,
  TriggerPatch,
  TriggerView,
} from '../schemas/triggers';
import { dashboardBot } from './dashboard';

type TriggerCreateInput = {
  kind: TriggerRow['kind'];
  name?: string;
  task: string;
  mode: 'ack' | 'wait';
  enabled: boolean;
  schedule?: { cron?: string; every_seconds?: number };
  poll?: { url: string; every_seconds: number };
};

function hookUrl(ctx: AppContext, deps: AppDeps, id: string): string {
  return `${deps.config.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? `${ctx.protocol}://${ctx.host}`}/v1/hooks/${id}`;
}

function view(ctx: AppContext, deps: AppDeps, t: TriggerRow) {
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
    hook_url: t.kind === 'webhook' ? hookUrl(ctx, deps, t.id) : null,
    secret_fingerprint: t.secret_fingerprint,
    schedule: t.kind === 'schedule' ? { cron: t.schedule_cron, every_seconds: t.every_seconds } : null,
    poll: t.kind === 'poll' ? { url: t.poll_url!, every_seconds: t.every_seconds } : null,
    created_at: t.created_at.getTime(),
  };
}

/** Starts a run of a trigger; with `wait`, answers with its result (spec, Incoming trigger webhook table). */
async function startRun(ctx: AppContext, deps: AppDeps, t: TriggerRow, kind: 'webhook' | 'manual', body: string): Promise<void> {
  const runId = newId('run');
  const input: AgentRunInput = {
    runId,
    botId: t.bot_id,
    workspaceId: t.workspace_id,
    triggerKind: kind,
    triggerId: t.id,
    input: composeRunInput(t.task, body),
    turnTimeoutMs: deps.config.LLM_TURN_TIMEOUT_MS,
    withTools: true,
    // Spec: in wait mode the caller reads the answer, so the agent sees none of the owner's private data.
    ownerContext: !(kind === 'webhook' && t.mode === 'wait'),
    role: kind === 'webhook' && t.mode === 'wait' ? 'visitor' : 'admin',
  };
  const handle = await deps.temporal.client.workflow.start(agentRunWorkflow, {
    workflowId: runWorkflowId(runId),
    taskQueue: deps.temporal.taskQueue,
    args: [input],
    searchAttributes: agentRunSearchAttributes(input),
  });
  if (t.mode === 'ack') {
    ctx.status = 202;
    ctx.body = { status: 'accepted', run_id: runId };
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      handle.result(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), deps.config.LLM_TURN_TIMEOUT_MS + 30_000);
      }),
    ]);
    ctx.body = { run_id: runId, status: 'done', answer: result.answer };
  } catch (err) {
    const reason = err instanceof WorkflowFailedError ? err.cause?.message ?? err.message : 'the run did not finish in time';
    throw new ApiError('run_failed', `The run failed: ${reason}. See the run log.`, { run_id: runId });
  } finally {
    clearTimeout(timer);
  }
}

/** Spec, Incoming trigger webhook, plus the dashboard's trigger management (not a stable contract). */
export function triggerRoutes(deps: AppDeps): RouteDef[] {
  const common = { tag: 'Triggers', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;
  const minInterval = deps.config.TRIGGER_MIN_INTERVAL_SECONDS;
  const sync = (t: TriggerRow, deleted = false) => syncTriggerSchedule(deps.temporal, t, { deleted, turnTimeoutMs: deps.config.LLM_TURN_TIMEOUT_MS });

  const loadTrigger = async (ctx: AppContext) => {
    const bot = await dashboardBot(ctx, deps);
    const t = await findTrigger(deps.db, (ctx.state.input.params as { tid: string }).tid, bot.id);
    if (!t) throw errors.notFound('No such trigger');
    return t;
  };
  const checkInterval = (every?: number) => {
    if (every !== undefined && every < minInterval) throw errors.badRequest(`every_seconds: must be at least ${minInterval}`);
  };

  return [
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/triggers',
      operationId: 'createTrigger',
      summary: 'Creates a trigger. A webhook trigger\'s address and secret are shown in this response only.',
      params: BotParams,
      body: TriggerCreate,
      responses: { 201: { description: 'Created', schema: TriggerCreated } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const b = ctx.state.input.body as TriggerCreateInput;
        checkInterval(b.schedule?.every_seconds ?? b.poll?.every_seconds);
        const id = newId('trg');
        const secret = b.kind === 'webhook' ? generateKey('trigger') : undefined;
        const res = await deps.db.query<TriggerRow>(
          `INSERT INTO triggers (id, bot_id, workspace_id, kind, name, task, mode, enabled, disabled_reason, secret_sealed, secret_fingerprint,
                                 schedule_cron, every_seconds, poll_url)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
          [
            id,
            bot.id,
            bot.workspace_id,
            b.kind,
            b.name ?? `${b.kind} trigger`,
            b.task,
            b.mode,
            b.enabled,
            b.enabled ? null : 'owner',
            secret ? deps.secrets.seal(secret) : null,
            secret ? fingerprint(secret) : null,
            b.schedule?.cron ?? null,
            b.schedule?.every_seconds ?? b.poll?.every_seconds ?? null,
            b.poll?.url ?? null,
          ],
        );
        const t = res.rows[0];
        try {
          await sync(t);
        } catch (err) {
          // The schedule is part of the trigger: without it, no trigger (an invalid cron lands here).
          await deps.db.query(`DELETE FROM triggers WHERE id = $1`, [id]);
          if ((err as { code?: number }).code === 3 /* INVALID_ARGUMENT */) throw errors.badRequest(`schedule: ${(err as Error).message}`);
          throw err;
        }
        ctx.status = 201;
        ctx.body = { ...view(ctx, deps, t), ...(secret ? { secret } : {}) };
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/triggers',
      operationId: 'listTriggers',
      summary: "The bot's triggers.",
      params: BotParams,
      responses: { 200: { description: 'Triggers', schema: TriggerList } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const res = await deps.db.query<TriggerRow>(`SELECT * FROM triggers WHERE bot_id = $1 AND deleted_at IS NULL ORDER BY created_at`, [bot.id]);
        ctx.body = { triggers: res.rows.map((t) => view(ctx, deps, t)) };
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'getTrigger',
      summary: 'One trigger.',
      params: TriggerParams,
      responses: { 200: { description: 'Trigger', schema: TriggerView } },
      errors: [...errs],
      handler: async (ctx) => {
        ctx.body = view(ctx, deps, await loadTrigger(ctx));
      },
    },
    {
      ...common,
      method: 'patch',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'patchTrigger',
      summary: 'Changes a trigger: name, task, mode, schedule or poll settings.',
      params: TriggerParams,
      body: TriggerPatch,
      responses: { 200: { description: 'Trigger', schema: TriggerView } },
      errors: [...errs],
      handler: async (ctx) => {
        const t = await loadTrigger(ctx);
        const p = ctx.state.input.body as Partial<TriggerCreateInput>;
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
        await sync(res.rows[0]);
        ctx.body = view(ctx, deps, res.rows[0]);
      },
    },
    ...(['enable', 'disable'] as const).map(
      (verb): RouteDef => ({
        ...common,
        method: 'post',
        path: `/v1/dashboard/bots/{id}/triggers/{tid}/${verb}`,
        operationId: `${verb}Trigger`,
        summary:
          verb === 'enable'
            ? 'Turns a trigger on (also after it was paused for failed runs); its schedule resumes.'
            : 'Turns a trigger off; its hook answers 409 and its schedule pauses.',
        params: TriggerParams,
        responses: { 200: { description: 'Trigger', schema: TriggerView } },
        errors: [...errs],
        handler: async (ctx) => {
          const t = await loadTrigger(ctx);
          const res = await deps.db.query<TriggerRow>(
            `UPDATE triggers SET enabled = $2, disabled_reason = $3, consecutive_failures = CASE WHEN $2 THEN 0 ELSE consecutive_failures END,
                    updated_at = now() WHERE id = $1 RETURNING *`,
            [t.id, verb === 'enable', verb === 'enable' ? null : 'owner'],
          );
          await sync(res.rows[0]);
          ctx.body = view(ctx, deps, res.rows[0]);
        },
      }),
    ),
    {
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'deleteTrigger',
      summary: 'Deletes a trigger; its hook answers 404 and its schedule is removed.',
      params: TriggerParams,
      responses: { 200: { description: 'Deleted' } },
      errors: [...errs],
      handler: async (ctx) => {
        const t = await loadTrigger(ctx);
        await deps.db.query(`UPDATE triggers SET deleted_at = now(), enabled = false WHERE id = $1`, [t.id]);
        await sync(t, true);
        ctx.body = { status: 'deleted', id: t.id };
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}/run',
      operationId: 'runTrigger',
      summary: 'Manual start: one run of the trigger now, answered like its webhook would be (202, or 200 with the result).',
      params: TriggerParams,
      body: ManualRun,
      responses: { 200: { description: 'Run finished (wait mode)', schema: HookDone }, 202: { description: 'Run started', schema: HookAccepted } },
      errors: [...errs, 'trigger_disabled', 'run_failed'],
      handler: async (ctx) => {
        const t = await loadTrigger(ctx);
        if (!t.enabled) throw new ApiError('trigger_disabled', 'The trigger is off; turn it on first');
        await startRun(ctx, deps, t, 'manual', (ctx.state.input.body as { body?: string }).body ?? 'Manual start from the dashboard');
      },
    },
    {
      method: 'post',
      path: '/v1/hooks/{tid}',
      operationId: 'triggerHook',
      tag: 'Incoming trigger webhook',
      summary: 'Wakes an agent: the body (any bytes, up to 256 KiB) signed with the trigger secret.',
      description:
        'Header `X-Hook-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body with the trigger secret. 401 bad signature, 404 unknown or deleted trigger, 409 trigger disabled, 202 `{status: accepted}` (acknowledge mode), 200 `{run_id, status: done, answer}` (wait mode), 502 with `run_id` when a synchronous run failed. No deduplication: a repeated delivery makes a second run.',
      params: HookParams,
      rawBody: true,
      bodyLimit: LIMITS.hookBodyBytes,
      headers: [{ name: 'X-Hook-Signature', description: '`sha256=<hex>` HMAC-SHA256 of the raw body', required: true }],
      responses: { 200: { description: 'Run finished (wait mode)', schema: HookDone }, 202: { description: 'Run started (acknowledge mode)', schema: HookAccepted } },
      errors: ['invalid_signature', 'not_found', 'trigger_disabled', 'payload_too_large', 'run_failed', 'service_unavailable'],
      handler: async (ctx) => {
        const { tid } = ctx.state.input.params as { tid: string };
        const t = await findTrigger(deps.db, tid);
        if (!t || t.kind !== 'webhook' || !t.secret_sealed) throw errors.notFound('No such trigger');
        const raw = ctx.state.rawBody ?? Buffer.alloc(0);
        const expected = `sha256=${createHmac('sha256', deps.secrets.open(t.secret_sealed)).update(raw).digest('hex')}`;
        if (!constantTimeEqual(ctx.get('X-Hook-Signature'), expected)) {
          throw new ApiError('invalid_signature', 'Missing or invalid X-Hook-Signature');
        }
        if (!t.enabled) throw new ApiError('trigger_disabled', t.disabled_reason === 'failures' ? 'The trigger was paused after failed runs' : 'The trigger is turned off');
        // The body is handed to the model as text; bytes that are not UTF-8 become replacement characters.
        await startRun(ctx, deps, t, 'webhook', raw.toString('utf8'));
      },
    },
  ];
}
