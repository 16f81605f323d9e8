import type { ErrorCode } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { AppDeps } from '../deps';
import { ALL_ROLES, AUTH_ERRORS, type RouteDef, route } from '../route';
import { BotParams } from '../../lib/schemas/common';
import {
  DashboardKnowledgeQuery,
  KnowledgeDeleted,
  KnowledgeIndexed,
  KnowledgeList,
  KnowledgeSource,
  KnowledgeWriteRequest,
  PageQuery,
  SourceId,
  SourceIdParams,
} from '../../lib/schemas/knowledge';
import { keyBot, sessionBot } from '../session';

const DashboardSourceParams = BotParams.extend({ source_id: SourceId });

/**
 * Spec, Endpoints → Knowledge base and Admin helpers. The admin alias is "technically identical" to the knowledge
 * write (same handler), but never rate limited.
 */
export function knowledgeRoutes(deps: AppDeps): RouteDef[] {
  const { knowledge } = deps.services;

  const write = {
    method: 'post',
    tag: 'Knowledge base',
    keys: ['secret'],
    body: KnowledgeWriteRequest,
    bodyLimit: LIMITS.knowledgeBodyBytes,
    idempotent: true,
    responses: {
      202: { description: 'Indexed: searchable at once; the bot’s answer cache is reset.', schema: KnowledgeIndexed },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 202;
      ctx.body = await knowledge.write(keyBot(ctx).botId, body);
    },
  } satisfies Partial<RouteDef<typeof KnowledgeWriteRequest>>;
  const dashboard = { tag: 'Dashboard', session: true, unstable: true, params: BotParams } as const;
  const dashboardErrors = ['unauthorized', 'forbidden', 'bad_request', 'not_found', 'service_unavailable'] as const;
  const writeErrors: ErrorCode[] = [
    'bad_request',
    ...AUTH_ERRORS,
    'idempotency_key_reused',
    'idempotency_in_progress',
    'payload_too_large',
  ];

  return [
    route({
      ...write,
      path: '/v1/api/knowledge',
      operationId: 'writeKnowledge',
      summary: 'Adds a knowledge source, or replaces the one with the same `source_id`.',
      description:
        'Body up to 5 MiB. Without `source_id` every write creates a new source and returns its generated id. ' +
        'The source is split into fragments and indexed before the response.',
      rateGroup: 'dialogue',
      errors: [...writeErrors, 'rate_limited', 'internal_error'],
    }),
    route({
      method: 'get',
      path: '/v1/api/knowledge',
      operationId: 'listKnowledge',
      tag: 'Knowledge base',
      summary: 'Lists the knowledge sources, oldest first, a page at a time.',
      keys: ['secret'],
      rateGroup: 'reads',
      query: PageQuery,
      responses: { 200: { description: 'One page of sources', schema: KnowledgeList } },
      errors: ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'],
      handler: async (ctx, { query }) => {
        ctx.body = await knowledge.list(keyBot(ctx).botId, query);
      },
    }),
    route({
      method: 'get',
      path: '/v1/api/knowledge/{id}',
      operationId: 'getKnowledge',
      tag: 'Knowledge base',
      summary: 'One knowledge source in full, with its text.',
      keys: ['secret'],
      rateGroup: 'reads',
      params: SourceIdParams,
      responses: { 200: { description: 'The source', schema: KnowledgeSource } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx, { params }) => {
        ctx.body = await knowledge.get(keyBot(ctx).botId, params.id);
      },
    }),
    route({
      method: 'delete',
      path: '/v1/api/knowledge/{id}',
      operationId: 'deleteKnowledge',
      tag: 'Knowledge base',
      summary: 'Deletes a knowledge source and its fragments; the bot’s answer cache is reset.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      params: SourceIdParams,
      responses: { 200: { description: 'Deleted', schema: KnowledgeDeleted } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx, { params }) => {
        ctx.body = await knowledge.remove(keyBot(ctx).botId, params.id);
      },
    }),
    // The dashboard's knowledge page: the same functions for the signed-in people of the bot's workspace.
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/knowledge',
      operationId: 'dashboardListKnowledge',
      summary: "The bot's knowledge sources, newest first unless asked, a page at a time; searchable by title or id.",
      roles: ALL_ROLES,
      query: DashboardKnowledgeQuery,
      responses: { 200: { description: 'One page of sources', schema: KnowledgeList } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params, query }) => {
        ctx.body = await knowledge.list((await sessionBot(deps, ctx, params.id)).id, query);
      },
    }),
    route({
      ...dashboard,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/knowledge',
      operationId: 'dashboardWriteKnowledge',
      summary: 'Adds a knowledge source (a text), or replaces the one with the same `source_id`.',
      body: KnowledgeWriteRequest,
      bodyLimit: LIMITS.knowledgeBodyBytes,
      responses: { 202: { description: 'Indexed', schema: KnowledgeIndexed } },
      errors: [...dashboardErrors, 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        ctx.status = 202;
        ctx.body = await knowledge.write(bot.id, body);
      },
    }),
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/knowledge/{source_id}',
      operationId: 'dashboardGetKnowledge',
      summary: 'One knowledge source in full, with its text.',
      roles: ALL_ROLES,
      params: DashboardSourceParams,
      responses: { 200: { description: 'The source', schema: KnowledgeSource } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params }) => {
        ctx.body = await knowledge.get((await sessionBot(deps, ctx, params.id)).id, params.source_id);
      },
    }),
    route({
      ...dashboard,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/knowledge/{source_id}',
      operationId: 'dashboardDeleteKnowledge',
      summary: 'Deletes a knowledge source and its fragments.',
      params: DashboardSourceParams,
      responses: { 200: { description: 'Deleted', schema: KnowledgeDeleted } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params }) => {
        ctx.body = await knowledge.remove((await sessionBot(deps, ctx, params.id)).id, params.source_id);
      },
    }),
    route({
      ...write,
      path: '/v1/admin/sources',
      operationId: 'adminWriteSource',
      tag: 'Admin helpers',
      summary: 'Same as `POST /v1/api/knowledge`, kept for old integrations; never rate limited.',
      errors: [...writeErrors, 'internal_error'],
    }),
  ];
}
