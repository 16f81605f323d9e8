import { openEventStream } from '../event-stream';
import type { StreamFrame } from '../../lib/conversations/service';
import type { AppDeps } from '../deps';
import { AUTH_ERRORS, type RouteDef, SENT_BY_HANDLER, route } from '../route';
import {
  ChatRequest,
  ChatResponse,
  EraseRequest,
  EraseResponse,
  HandoffRequest,
  HandoffResponse,
  OkResponse,
  PollQuery,
  PollResponse,
  StreamFrame as StreamFrameSchema,
  TypingRequest,
} from '../../lib/schemas/conversation';
import { keyBot, publicBaseUrl } from '../session';

/** Spec, Endpoints → Conversation. */
export function conversationRoutes(deps: AppDeps): RouteDef[] {
  return [...chatRoutes(deps), ...conversationStateRoutes(deps)];
}

/** A visitor message answered: as one JSON body, or streamed. */
function chatRoutes(deps: AppDeps): RouteDef[] {
  const { conversations } = deps.services;
  const common = { tag: 'Conversation', keys: ['secret' as const] };

  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/api/chat',
      operationId: 'chat',
      summary: 'One visitor message; the full answer in one JSON response.',
      description:
        'The first message creates the conversation (omit `session_id` to get a generated one). While a person handles the conversation the message is forwarded and `answer` is empty with `handoff: true`. An exhausted monthly quota is 200 with `quota_exceeded: true`.',
      rateGroup: 'dialogue',
      idempotent: true,
      body: ChatRequest,
      responses: { 200: { description: 'Answer', schema: ChatResponse } },
      errors: [
        'bad_request',
        ...AUTH_ERRORS,
        'not_found',
        'idempotency_key_reused',
        'idempotency_in_progress',
        'payload_too_large',
        'rate_limited',
        'internal_error',
        'llm_unavailable',
        'llm_overloaded',
      ],
      handler: async (ctx, { body }) => {
        const reply = await conversations.answer(keyBot(ctx).botId, body, ctx.state.idempotencyScope);
        ctx.state.sessionId = reply.session_id;
        return reply;
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/chat/stream',
      operationId: 'chatStream',
      summary: 'One visitor message; the answer as Server-Sent Events.',
      description:
        'Errors found before the stream starts (auth, limits, validation) are ordinary JSON responses. Then 200 `text/event-stream` with `data: <json>` frames: fragments (`delta`), error frames (`error`, sometimes `code` and `retry_after`), and always an end frame (`done: true`) last.',
      rateGroup: 'dialogue',
      idempotent: true,
      body: ChatRequest,
      responses: {
        200: {
          description: 'Event stream of StreamFrame objects',
          schema: StreamFrameSchema,
          contentType: 'text/event-stream',
        },
      },
      errors: [
        'bad_request',
        ...AUTH_ERRORS,
        'not_found',
        'idempotency_key_reused',
        'idempotency_in_progress',
        'payload_too_large',
        'rate_limited',
        'internal_error',
      ],
      handler: async (ctx, { body }) => {
        // Everything that can fail as JSON fails here, before the first byte of the stream.
        const chat = await conversations.openStream(keyBot(ctx).botId, body, ctx.state.idempotencyScope);
        ctx.state.sessionId = chat.sessionId;
        const stream = openEventStream(ctx);
        const write = (frame: StreamFrame) => {
          // An error frame is a failed turn, not an answer: with an Idempotency-Key, a retry runs (joins) it again.
          if ('error' in frame) ctx.state.replayable = false;
          stream.write(frame);
        };
        void chat
          .run(write, ctx.state.log)
          .then(({ turnPending }) => {
            ctx.state.turnPending = turnPending;
          })
          .finally(() => stream.end());
        return SENT_BY_HANDLER;
      },
    }),
  ];
}

/** The rest of a conversation: handoff, the poll, typing, erasing a visitor. */
function conversationStateRoutes(deps: AppDeps): RouteDef[] {
  const { conversations } = deps.services;
  const common = { tag: 'Conversation', keys: ['secret' as const] };

  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/api/handoff',
      operationId: 'handoff',
      summary: 'Hands the conversation to a person: it enters the operator queue (`waiting`).',
      description:
        '404 when handoff is disabled for the bot, or the session does not exist or belongs to another bot. Sends the `escalated` webhook.',
      rateGroup: 'dialogue',
      idempotent: true,
      body: HandoffRequest,
      responses: { 200: { description: 'Handed over', schema: HandoffResponse } },
      errors: [
        'bad_request',
        ...AUTH_ERRORS,
        'not_found',
        'idempotency_key_reused',
        'idempotency_in_progress',
        'payload_too_large',
        'rate_limited',
        'internal_error',
      ],
      handler: async (ctx, { body }) => {
        ctx.state.sessionId = body.session_id;
        return await conversations.handoff(keyBot(ctx).botId, body.session_id);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/api/messages',
      operationId: 'pollMessages',
      summary: 'New messages for the visitor since the cursor, the conversation status and the operator indicators.',
      description:
        'Poll every 2–3 seconds. The legacy `after` parameter is ignored: without `cursor` the transcript starts from the beginning. Events are never included.',
      rateGroup: 'reads',
      query: PollQuery,
      responses: { 200: { description: 'Poll response', schema: PollResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'],
      handler: async (ctx, { query }) => {
        return await conversations.poll(keyBot(ctx).botId, query.session_id, query.cursor, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/typing',
      operationId: 'visitorTyping',
      summary: 'Signals the operators that the visitor is typing (shown for about 6 seconds).',
      rateGroup: 'reads',
      body: TypingRequest,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        await conversations.visitorTyping(keyBot(ctx).botId, body.session_id);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/api/visitors/erase',
      operationId: 'eraseVisitor',
      summary:
        'Deletes everything stored about one visitor: conversations, messages, runs, webhook records and workflow histories.',
      description:
        'Identify the visitor by `user_token` (or the confirmed `user`), by `session_id`, or both. Rate group: dialogue and writes.',
      rateGroup: 'dialogue',
      body: EraseRequest,
      responses: { 200: { description: 'Erased', schema: EraseResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        const { conversations: count } = await conversations.eraseVisitor(keyBot(ctx).botId, body);
        return { status: 'erased', conversations: count };
      },
    }),
  ];
}
