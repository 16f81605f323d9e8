import { LIMITS } from '../../lib/limits';
import type { RunStarted } from '../../lib/triggers/service';
import type { AppDeps } from '../deps';
import { type Reply, type RouteDef, reply, route } from '../route';
import type { z } from 'zod';
import { BotParams, Deleted } from '../../lib/schemas/common';
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
} from '../../lib/schemas/triggers';
import { publicBaseUrl, sessionBot } from '../session';

/** Spec, Incoming trigger webhook table: 202 `{status: accepted}` at once, or 200 with the run's answer. */
function answerRun(run: RunStarted): z.infer<typeof HookDone> | Reply<202, z.infer<typeof HookAccepted>> {
  return run.mode === 'ack'
    ? reply(202, { status: 'accepted' as const, run_id: run.run_id })
    : { run_id: run.run_id, status: 'done', answer: run.answer };
}

/** Spec, Incoming trigger webhook, plus the dashboard's trigger management (not a stable contract). */
export function triggerRoutes(deps: AppDeps): RouteDef[] {
  return [...triggerManagementRoutes(deps), ...triggerRunRoutes(deps)];
}

/** Creating, reading, changing and deleting triggers. */
function triggerManagementRoutes(deps: AppDeps): RouteDef[] {
  const { triggers } = deps.services;
  const common = { tag: 'Triggers', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;

  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/triggers',
      operationId: 'createTrigger',
      summary: "Creates a trigger. A webhook trigger's address and secret are shown in this response only.",
      params: BotParams,
      body: TriggerCreate,
      responses: { 201: { description: 'Created', schema: TriggerCreated } },
      errors: [...errs],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await triggers.create(bot, body, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/triggers',
      operationId: 'listTriggers',
      summary: "The bot's triggers.",
      params: BotParams,
      responses: { 200: { description: 'Triggers', schema: TriggerList } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { triggers: await triggers.list(bot.id, publicBaseUrl(deps)) };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'getTrigger',
      summary: 'One trigger.',
      params: TriggerParams,
      responses: { 200: { description: 'Trigger', schema: TriggerView } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await triggers.get(bot.id, params.tid, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'patchTrigger',
      summary: 'Changes a trigger: name, task, mode, schedule or poll settings.',
      params: TriggerParams,
      body: TriggerPatch,
      responses: { 200: { description: 'Trigger', schema: TriggerView } },
      errors: [...errs],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await triggers.update(bot.id, params.tid, body, publicBaseUrl(deps));
      },
    }),
    ...(['enable', 'disable'] as const).map((verb) =>
      route({
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
        handler: async (ctx, { params }) => {
          const bot = await sessionBot(deps, ctx, params.id);
          return await triggers.setEnabled(bot.id, params.tid, verb === 'enable', publicBaseUrl(deps));
        },
      }),
    ),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}',
      operationId: 'deleteTrigger',
      summary: 'Deletes a trigger; its hook answers 404 and its schedule is removed.',
      params: TriggerParams,
      responses: { 200: { description: 'Deleted', schema: Deleted } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await triggers.remove(bot.id, params.tid);
      },
    }),
  ];
}

/** Runs of a trigger: started by hand or by its signed hook. */
function triggerRunRoutes(deps: AppDeps): RouteDef[] {
  const { triggers } = deps.services;
  const common = { tag: 'Triggers', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;

  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/triggers/{tid}/run',
      operationId: 'runTrigger',
      summary:
        'Manual start: one run of the trigger now, answered like its webhook would be (202, or 200 with the result).',
      params: TriggerParams,
      body: ManualRun,
      responses: {
        200: { description: 'Run finished (wait mode)', schema: HookDone },
        202: { description: 'Run started', schema: HookAccepted },
      },
      errors: [...errs, 'trigger_disabled', 'run_failed'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return answerRun(await triggers.runNow(bot.id, params.tid, body.body));
      },
    }),
    route({
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
      headers: [
        { name: 'X-Hook-Signature', description: '`sha256=<hex>` HMAC-SHA256 of the raw body', required: true },
      ],
      responses: {
        200: { description: 'Run finished (wait mode)', schema: HookDone },
        202: { description: 'Run started (acknowledge mode)', schema: HookAccepted },
      },
      errors: [
        'invalid_signature',
        'not_found',
        'trigger_disabled',
        'payload_too_large',
        'run_failed',
        'service_unavailable',
      ],
      handler: async (ctx, { params }) => {
        return answerRun(
          await triggers.receiveHook(params.tid, ctx.state.rawBody ?? Buffer.alloc(0), ctx.get('X-Hook-Signature')),
        );
      },
    }),
  ];
}
