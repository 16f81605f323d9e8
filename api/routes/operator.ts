import type { AppDeps } from '../deps';
import { AUTH_ERRORS, type RouteDef, route } from '../route';
import { PageQuery } from '../../lib/schemas/common';
import { OkResponse } from '../../lib/schemas/conversation';
import {
  ReplyRequest,
  ReplyResponse,
  ResolveResponse,
  ThreadList,
  ThreadParams,
  Transcript,
} from '../../lib/schemas/operator';
import { keyBot, publicBaseUrl } from '../session';

const COMMON_ERRORS = ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'] as const;

/** Spec, Operator API: the integrator's own operator console, on the secret key, rate group 240/min. */
export function operatorRoutes(deps: AppDeps): RouteDef[] {
  const { conversations } = deps.services;
  const common = { tag: 'Operator API', keys: ['secret' as const], rateGroup: 'reads' as const };
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/api/operator/threads',
      operationId: 'listThreads',
      summary:
        'Open requests (conversations handed to a person, `waiting` or `operator`), most recently handed over first.',
      query: PageQuery,
      responses: { 200: { description: 'One page of requests', schema: ThreadList } },
      errors: [...COMMON_ERRORS],
      handler: async (ctx, { query }) => {
        return await conversations.listThreads(keyBot(ctx).botId, query, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/api/operator/threads/{sid}',
      operationId: 'threadTranscript',
      summary:
        'The full transcript: messages and events, oldest first. Opening it tells the visitor an operator is reading (`operator_here`).',
      params: ThreadParams,
      query: PageQuery,
      responses: { 200: { description: 'One page of the transcript', schema: Transcript } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx, { params, query }) => {
        return await conversations.transcript(keyBot(ctx).botId, params.sid, query, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/operator/threads/{sid}/reply',
      operationId: 'operatorReply',
      summary: 'An operator reply; the visitor sees it at the next poll. The conversation becomes `operator`.',
      params: ThreadParams,
      body: ReplyRequest,
      idempotent: true,
      responses: { 200: { description: 'Reply stored', schema: ReplyResponse } },
      errors: [...COMMON_ERRORS, 'not_found', 'payload_too_large', 'idempotency_key_reused', 'idempotency_in_progress'],
      handler: async (ctx, { params, body }) => {
        ctx.state.sessionId = params.sid;
        return await conversations.operatorReply(keyBot(ctx).botId, params.sid, body.text, ctx.state.idempotencyScope);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/operator/threads/{sid}/typing',
      operationId: 'operatorTyping',
      summary:
        'Shows the visitor that the operator is typing; it goes off by itself about 6 seconds after the last call.',
      params: ThreadParams,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx, { params }) => {
        await conversations.operatorTyping(keyBot(ctx).botId, params.sid);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/operator/threads/{sid}/resolve',
      operationId: 'resolveThread',
      summary:
        'Closes the request: the bot answers again and the `resolved` webhook is sent. Resolving a conversation that is not handed over changes nothing.',
      params: ThreadParams,
      responses: { 200: { description: 'Resolved', schema: ResolveResponse } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx, { params }) => {
        return await conversations.resolve(keyBot(ctx).botId, params.sid);
      },
    }),
  ];
}
