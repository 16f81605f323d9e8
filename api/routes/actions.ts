import type { AppDeps } from '../deps';
import { type RouteDef, route } from '../route';
import {
  ActionCreate,
  ActionList,
  ActionParams,
  ActionView,
  ApprovalDecided,
  ApprovalList,
  ApprovalParams,
} from '../../lib/schemas/actions';
import { BotParams, Deleted } from '../../lib/schemas/common';
import { sessionBot, sessionUser } from '../session';

/** Agent actions: HTTP tools a run may call, and the owner's approvals of those that need one (dashboard only). */
export function actionRoutes(deps: AppDeps): RouteDef[] {
  const { actions } = deps.services;
  const common = { tag: 'Actions', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;
  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/actions',
      operationId: 'createAction',
      summary: 'Adds an action (an HTTP tool the agent may call).',
      params: BotParams,
      body: ActionCreate,
      responses: { 201: { description: 'Created', schema: ActionView } },
      errors: [...errs, 'conflict'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await actions.create(bot.id, body);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/actions',
      operationId: 'listActions',
      summary: "The bot's actions.",
      params: BotParams,
      responses: { 200: { description: 'Actions', schema: ActionList } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { actions: await actions.list(bot.id) };
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/actions/{action}',
      operationId: 'deleteAction',
      summary: 'Removes an action.',
      params: ActionParams,
      responses: { 200: { description: 'Deleted', schema: Deleted } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await actions.remove(bot.id, params.action);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/approvals',
      operationId: 'listApprovals',
      summary: 'Action calls waiting for approval (and recent decisions), newest first.',
      params: BotParams,
      responses: { 200: { description: 'Approvals', schema: ApprovalList } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { approvals: await actions.listApprovals(bot.id) };
      },
    }),
    ...(['approve', 'reject'] as const).map((verb) =>
      route({
        ...common,
        method: 'post',
        path: `/v1/dashboard/bots/{id}/approvals/{aid}/${verb}`,
        operationId: `${verb}Action`,
        summary:
          verb === 'approve'
            ? 'Approves a waiting action call: the run carries it out and goes on. Only a signed-in user can, never a builder key.'
            : 'Rejects a waiting action call: the run goes on without it.',
        params: ApprovalParams,
        responses: { 200: { description: 'Decided', schema: ApprovalDecided } },
        errors: [...errs, 'conflict'],
        handler: async (ctx, { params }) => {
          const bot = await sessionBot(deps, ctx, params.id);
          return await actions.decide(bot.id, params.aid, verb === 'approve', sessionUser(ctx).userId);
        },
      }),
    ),
  ];
}
