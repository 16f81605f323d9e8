import { pollMessages } from '../../lib/conversations/poll';
import { errors } from '../../lib/errors';
import type { AppDeps } from '../app';
import type { RouteDef } from '../route';
import { OkResponse, PollQuery, PollResponse, TypingRequest } from '../schemas/conversation';

export const AUTH_ERRORS = ['missing_key', 'invalid_key', 'wrong_key_type', 'service_unavailable'] as const;

/** How long a visitor's typing signal is shown to operators. */
const VISITOR_TYPING_MS = 6_000;

/** Spec, Endpoints → Conversation. */
export function conversationRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/v1/api/messages',
      operationId: 'pollMessages',
      tag: 'Conversation',
      summary: 'New messages for the visitor since the cursor, the conversation status and the operator indicators.',
      description:
        'Poll every 2–3 seconds. The legacy `after` parameter is ignored: without `cursor` the transcript starts from the beginning.',
      keys: ['secret'],
      rateGroup: 'reads',
      query: PollQuery,
      responses: { 200: { description: 'Poll response', schema: PollResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'],
      handler: async (ctx) => {
        const q = ctx.state.input.query as { session_id: string; cursor?: string };
        ctx.body = await pollMessages(deps.db, ctx.state.principal!.botId!, q.session_id, q.cursor);
      },
    },
    {
      method: 'post',
      path: '/v1/api/typing',
      operationId: 'visitorTyping',
      tag: 'Conversation',
      summary: 'Signals the operators that the visitor is typing (shown for about 6 seconds).',
      keys: ['secret'],
      rateGroup: 'reads',
      body: TypingRequest,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx) => {
        const { session_id } = ctx.state.input.body as { session_id: string };
        const res = await deps.db.query(
          `UPDATE conversations SET visitor_typing_until = now() + make_interval(secs => $3::double precision / 1000)
            WHERE session_id = $1 AND bot_id = $2`,
          [session_id, ctx.state.principal!.botId, VISITOR_TYPING_MS],
        );
        if (!res.rowCount) throw errors.notFound('No conversation with this session_id');
        ctx.body = { status: 'ok' };
      },
    },
  ];
}
