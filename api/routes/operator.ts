import { randomUUID } from 'node:crypto';
import { type ConversationRow, findConversation, startOperation } from '../../lib/conversations/service';
import { decodeCursor, encodeCursor } from '../../lib/cursor';
import { errors } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import { operatorReplyUpdate, resolveUpdate } from '../../workflows/messages';
import type { AppDeps } from '../app';
import type { AppContext } from '../context';
import type { RouteDef } from '../route';
import { PageQuery } from '../schemas/common';
import { OkResponse } from '../schemas/conversation';
import { ReplyRequest, ReplyResponse, ResolveResponse, ThreadList, ThreadParams, Transcript } from '../schemas/operator';
import { AUTH_ERRORS } from './conversation';

const COMMON_ERRORS = ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'] as const;

async function conversationOf(ctx: AppContext, deps: AppDeps): Promise<ConversationRow> {
  const { sid } = ctx.state.input.params as { sid: string };
  const conversation = await findConversation(deps.db, ctx.state.principal!.botId!, sid);
  if (!conversation) throw errors.notFound('No conversation with this session_id');
  return conversation;
}

/** Spec, Operator API: the integrator's own operator console, on the secret key, rate group 240/min. */
export function operatorRoutes(deps: AppDeps): RouteDef[] {
  const common = { tag: 'Operator API', keys: ['secret' as const], rateGroup: 'reads' as const };
  return [
    {
      ...common,
      method: 'get',
      path: '/v1/api/operator/threads',
      operationId: 'listThreads',
      summary: 'Open requests (conversations handed to a person, `waiting` or `operator`), most recently handed over first.',
      query: PageQuery,
      responses: { 200: { description: 'One page of requests', schema: ThreadList } },
      errors: [...COMMON_ERRORS],
      handler: async (ctx) => {
        const { limit, cursor } = ctx.state.input.query as { limit: number; cursor?: string };
        const after = cursor ? decodeCursor<{ e: number; s: string }>(cursor, ['e', 's']) : undefined;
        const res = await deps.db.query<{
          session_id: string;
          status: string;
          visitor_user: string | null;
          escalated_ms: number;
          last_ms: number;
          last: { author: string; text: string; at: number } | null;
        }>(
          `SELECT c.session_id, c.status, c.visitor_user,
                  (extract(epoch FROM c.escalated_at) * 1000)::bigint AS escalated_ms,
                  (extract(epoch FROM c.last_message_at) * 1000)::bigint AS last_ms,
                  (SELECT json_build_object('author', m.author, 'text', m.text, 'at', m.at) FROM messages m
                    WHERE m.session_id = c.session_id AND m.author <> 'event' ORDER BY m.seq DESC LIMIT 1) AS last
             FROM conversations c
            WHERE c.bot_id = $1 AND c.escalated_at IS NOT NULL AND c.status IN ('waiting', 'operator')
              AND ($2::bigint IS NULL OR ((extract(epoch FROM c.escalated_at) * 1000)::bigint, c.session_id) < ($2::bigint, $3::text))
            ORDER BY c.escalated_at DESC, c.session_id DESC
            LIMIT $4`,
          [ctx.state.principal!.botId, after?.e ?? null, after?.s ?? null, limit + 1],
        );
        const page = res.rows.slice(0, limit);
        const last = page.at(-1);
        ctx.body = {
          threads: page.map((r) => ({
            session_id: r.session_id,
            status: r.status,
            visitor_user: r.visitor_user,
            escalated_at: Number(r.escalated_ms),
            last_message_at: Number(r.last_ms),
            last_message: r.last ? { ...r.last, at: Number(r.last.at) } : null,
          })),
          next_cursor: res.rows.length > limit && last ? encodeCursor({ e: Number(last.escalated_ms), s: last.session_id }) : '',
        };
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/api/operator/threads/{sid}',
      operationId: 'threadTranscript',
      summary: 'The full transcript: messages and events, oldest first. Opening it tells the visitor an operator is reading (`operator_here`).',
      params: ThreadParams,
      query: PageQuery,
      responses: { 200: { description: 'One page of the transcript', schema: Transcript } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx) => {
        const conversation = await conversationOf(ctx, deps);
        const { limit, cursor } = ctx.state.input.query as { limit: number; cursor?: string };
        const after = cursor ? decodeCursor<{ seq: number }>(cursor, ['seq']).seq : 0;
        const [meta, rows] = await Promise.all([
          deps.db.query<{ visitor_user: string | null; status: string }>(
            `UPDATE conversations SET operator_seen_at = COALESCE(operator_seen_at, now()) WHERE session_id = $1 RETURNING visitor_user, status`,
            [conversation.session_id],
          ),
          deps.db.query<{ seq: number; id: string; author: string; text: string; at: number; event: Record<string, unknown> | null }>(
            `SELECT seq, id, author, text, at, event FROM messages WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
            [conversation.session_id, after, limit + 1],
          ),
        ]);
        const page = rows.rows.slice(0, limit);
        ctx.body = {
          session_id: conversation.session_id,
          status: meta.rows[0]?.status ?? conversation.status,
          visitor_user: meta.rows[0]?.visitor_user ?? null,
          messages: page.map((m) => ({ id: m.id, author: m.author, text: m.text, at: Number(m.at), ...(m.event ? { event: m.event } : {}) })),
          next_cursor: rows.rows.length > limit ? encodeCursor({ seq: Number(page.at(-1)!.seq) }) : '',
        };
      },
    },
    {
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
      handler: async (ctx) => {
        const conversation = await conversationOf(ctx, deps);
        const { text } = ctx.state.input.body as { text: string };
        ctx.body = await deps.temporal.client.workflow.executeUpdateWithStart(operatorReplyUpdate, {
          args: [{ messageId: `msg_op_${randomUUID()}`, text, at: Date.now() }],
          startWorkflowOperation: startOperation(deps, conversation),
        });
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/api/operator/threads/{sid}/typing',
      operationId: 'operatorTyping',
      summary: 'Shows the visitor that the operator is typing; it goes off by itself about 6 seconds after the last call.',
      params: ThreadParams,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx) => {
        const conversation = await conversationOf(ctx, deps);
        await deps.db.query(
          `UPDATE conversations SET operator_typing_until = now() + make_interval(secs => $2::double precision / 1000) WHERE session_id = $1`,
          [conversation.session_id, LIMITS.operatorTypingMs],
        );
        ctx.body = { status: 'ok' };
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/api/operator/threads/{sid}/resolve',
      operationId: 'resolveThread',
      summary: 'Closes the request: the bot answers again and the `resolved` webhook is sent. Resolving a conversation that is not handed over changes nothing.',
      params: ThreadParams,
      responses: { 200: { description: 'Resolved', schema: ResolveResponse } },
      errors: [...COMMON_ERRORS, 'not_found'],
      handler: async (ctx) => {
        const conversation = await conversationOf(ctx, deps);
        ctx.body = await deps.temporal.client.workflow.executeUpdateWithStart(resolveUpdate, {
          args: [{ at: Date.now() }],
          startWorkflowOperation: startOperation(deps, conversation),
        });
      },
    },
  ];
}
