import { WorkflowNotFoundError } from '@temporalio/client';
import { PassThrough } from 'node:stream';
import { pollMessages } from '../../lib/conversations/poll';
import {
  type ChatInput,
  type ConversationDeps,
  type PreparedChat,
  QUOTA_PLACEHOLDER,
  type TurnSubscription,
  TurnTimeoutError,
  findConversation,
  firstOutcome,
  loadBot,
  prepareChat,
  runTurn,
  startOperation,
  subscribeTurn,
  updateFailureType,
} from '../../lib/conversations/service';
import { ApiError, errors } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { TurnResult } from '../../workflows/messages';
import { conversationWorkflowId, handoffUpdate, runWorkflowId } from '../../workflows/messages';
import type { AppDeps } from '../app';
import type { AppContext } from '../context';
import type { RouteDef } from '../route';
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
  StreamFrame,
  TypingRequest,
} from '../schemas/conversation';

export const AUTH_ERRORS = ['missing_key', 'invalid_key', 'wrong_key_type', 'service_unavailable'] as const;

/** Seconds a client should wait after a turn the API stopped waiting for. */
const TURN_TIMEOUT_RETRY_AFTER = 10;

export function conversationDeps(deps: AppDeps): ConversationDeps {
  return { db: deps.db, temporal: deps.temporal, secrets: deps.secrets, turnTimeoutMs: deps.config.LLM_TURN_TIMEOUT_MS, deltaHub: deps.deltaHub };
}

/** Spec, Conversation: 503 `{error, code, session_id}`, plus `retry_after` and `Retry-After` when overloaded. */
function turnError(error: NonNullable<TurnResult['error']>, sessionId: string): ApiError {
  if (error.code === 'llm_overloaded') {
    const retryAfter = error.retryAfter ?? 5;
    return new ApiError('llm_overloaded', 'The AI backend is busy or the turn did not finish; retry shortly', { session_id: sessionId, retry_after: retryAfter }, { 'Retry-After': String(retryAfter) });
  }
  if (error.code === 'llm_unavailable') {
    return new ApiError('llm_unavailable', 'The AI backend is unavailable (key or funds); the owner must act', { session_id: sessionId });
  }
  return new ApiError('internal_error', 'The answer could not be generated; it is safe to retry', { session_id: sessionId });
}

function timeoutResult(): TurnResult {
  return { answer: '', error: { code: 'llm_overloaded', message: 'The turn did not finish in time', retryAfter: TURN_TIMEOUT_RETRY_AFTER } };
}

/** Runs the turn and resolves with its first known outcome; a turn the API stopped waiting for is `llm_overloaded`. */
function turnOutcome(cdeps: ConversationDeps, prepared: Extract<PreparedChat, { kind: 'turn' }>, subscription: TurnSubscription | null, streamTurnId?: string) {
  return firstOutcome(runTurn(cdeps, prepared, streamTurnId), subscription).catch((err) => {
    if (err instanceof TurnTimeoutError) return timeoutResult();
    throw err;
  });
}

/** One chat turn answered as JSON: `POST /v1/api/chat`, and the dashboard's test chat. */
export async function answerChat(cdeps: ConversationDeps, botId: string, body: ChatInput): Promise<Record<string, unknown>> {
  const prepared = await prepareChat(cdeps, botId, body);
  if (prepared.kind === 'quota_exceeded') {
    return { answer: QUOTA_PLACEHOLDER, session_id: prepared.sessionId, quota_exceeded: true, notice: 'outage' };
  }
  const subscription = await subscribeTurn(cdeps, prepared.update.runId);
  const result = await turnOutcome(cdeps, prepared, subscription).finally(() => subscription?.close());
  if (result.error) throw turnError(result.error, prepared.sessionId);
  return { answer: result.answer, session_id: prepared.sessionId, ...(result.handoff ? { handoff: true } : {}) };
}

/** Spec, Endpoints → Conversation. */
export function conversationRoutes(deps: AppDeps): RouteDef[] {
  const cdeps = conversationDeps(deps);

  return [
    {
      method: 'post',
      path: '/v1/api/chat',
      operationId: 'chat',
      tag: 'Conversation',
      summary: 'One visitor message; the full answer in one JSON response.',
      description:
        'The first message creates the conversation (omit `session_id` to get a generated one). While a person handles the conversation the message is forwarded and `answer` is empty with `handoff: true`. An exhausted monthly quota is 200 with `quota_exceeded: true`.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      idempotent: true,
      body: ChatRequest,
      responses: { 200: { description: 'Answer', schema: ChatResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'idempotency_key_reused', 'idempotency_in_progress', 'payload_too_large', 'rate_limited', 'internal_error', 'llm_unavailable', 'llm_overloaded'],
      handler: async (ctx) => {
        ctx.body = await answerChat(cdeps, ctx.state.principal!.botId!, ctx.state.input.body as ChatInput);
      },
    },
    {
      method: 'post',
      path: '/v1/api/chat/stream',
      operationId: 'chatStream',
      tag: 'Conversation',
      summary: 'One visitor message; the answer as Server-Sent Events.',
      description:
        'Errors found before the stream starts (auth, limits, validation) are ordinary JSON responses. Then 200 `text/event-stream` with `data: <json>` frames: fragments (`delta`), error frames (`error`, sometimes `code` and `retry_after`), and always an end frame (`done: true`) last.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      idempotent: true,
      body: ChatRequest,
      responses: { 200: { description: 'Event stream of StreamFrame objects', schema: StreamFrame, contentType: 'text/event-stream' } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'idempotency_key_reused', 'idempotency_in_progress', 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx) => streamChat(ctx, deps, cdeps),
    },
    {
      method: 'post',
      path: '/v1/api/handoff',
      operationId: 'handoff',
      tag: 'Conversation',
      summary: 'Hands the conversation to a person: it enters the operator queue (`waiting`).',
      description: '404 when handoff is disabled for the bot, or the session does not exist or belongs to another bot. Sends the `escalated` webhook.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      idempotent: true,
      body: HandoffRequest,
      responses: { 200: { description: 'Handed over', schema: HandoffResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'idempotency_key_reused', 'idempotency_in_progress', 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx) => {
        const { session_id } = ctx.state.input.body as { session_id: string };
        const bot = await loadBot(deps.db, ctx.state.principal!.botId!);
        if (!bot.handoff_enabled) throw errors.notFound('Handoff is disabled for this bot');
        const conversation = await findConversation(deps.db, bot.id, session_id);
        if (!conversation) throw errors.notFound('No conversation with this session_id');
        try {
          ctx.body = await deps.temporal.client.workflow.executeUpdateWithStart(handoffUpdate, {
            args: [{ handoffEnabled: bot.handoff_enabled, at: Date.now() }],
            startWorkflowOperation: startOperation(deps, conversation),
          });
        } catch (err) {
          if (updateFailureType(err) === 'handoff_disabled') throw errors.notFound('Handoff is disabled for this bot');
          throw err;
        }
      },
    },
    {
      method: 'get',
      path: '/v1/api/messages',
      operationId: 'pollMessages',
      tag: 'Conversation',
      summary: 'New messages for the visitor since the cursor, the conversation status and the operator indicators.',
      description:
        'Poll every 2–3 seconds. The legacy `after` parameter is ignored: without `cursor` the transcript starts from the beginning. Events are never included.',
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
          [session_id, ctx.state.principal!.botId, LIMITS.operatorTypingMs],
        );
        if (!res.rowCount) throw errors.notFound('No conversation with this session_id');
        ctx.body = { status: 'ok' };
      },
    },
    {
      method: 'post',
      path: '/v1/api/visitors/erase',
      operationId: 'eraseVisitor',
      tag: 'Conversation',
      summary: 'Deletes everything stored about one visitor: conversations, messages, runs, webhook records and workflow histories.',
      description: 'Identify the visitor by `user_token` (or the confirmed `user`), by `session_id`, or both. Rate group: dialogue and writes.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      body: EraseRequest,
      responses: { 200: { description: 'Erased', schema: EraseResponse } },
      errors: ['bad_request', ...AUTH_ERRORS, 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx) => {
        const body = ctx.state.input.body as { user_token?: string; session_id?: string };
        const botId = ctx.state.principal!.botId!;
        const sessions = await deps.db.query<{ session_id: string }>(
          `SELECT session_id FROM conversations WHERE bot_id = $1 AND (session_id = $2 OR visitor_user = $3)`,
          [botId, body.session_id ?? null, body.user_token ?? null],
        );
        const ids = sessions.rows.map((r) => r.session_id);
        const runs = await deps.db.query<{ id: string }>(`SELECT id FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        // Workflow histories hold message texts too: delete them before the rows that point at them.
        const workflowIds = [...ids.map((sid) => conversationWorkflowId(botId, sid)), ...runs.rows.map((r) => runWorkflowId(r.id))];
        for (const workflowId of workflowIds) {
          try {
            await deps.temporal.connection.workflowService.deleteWorkflowExecution({
              namespace: deps.temporal.namespace,
              workflowExecution: { workflowId },
            });
          } catch (err) {
            if (!(err instanceof WorkflowNotFoundError) && (err as { code?: number }).code !== 5 /* NOT_FOUND */) throw err;
          }
        }
        await deps.db.query(`DELETE FROM webhook_deliveries WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        await deps.db.query(`DELETE FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        await deps.db.query(`DELETE FROM conversations WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        ctx.body = { status: 'erased', conversations: ids.length };
      },
    },
  ];
}

/**
 * `/chat/stream`: subscribe to the turn's fragments before sending the turn, write SSE frames, and always end with
 * the end frame (spec, chat/stream). If the model's first attempt was cut off and a retry produced a different
 * text, the fragments already sent cannot be taken back: an error frame without `code` says so, and the full
 * answer is in the transcript.
 */
async function streamChat(ctx: AppContext, deps: AppDeps, cdeps: ConversationDeps): Promise<void> {
  const prepared = await prepareChat(cdeps, ctx.state.principal!.botId!, ctx.state.input.body as ChatInput);
  const stream = new PassThrough();
  const write = (frame: Record<string, unknown>) => stream.write(`data: ${JSON.stringify(frame)}\n\n`);
  let streamed = '';
  let attemptKey: string | undefined;
  const subscription =
    prepared.kind === 'turn'
      ? await subscribeTurn(cdeps, prepared.update.runId, (msg) => {
          attemptKey ??= msg.k;
          if (msg.k !== attemptKey) return; // a retried attempt: its text is reconciled at the end
          streamed += msg.d;
          write({ delta: msg.d });
        })
      : null;
  if (prepared.kind === 'turn' && !subscription) throw errors.serviceUnavailable('Streaming is temporarily unavailable; retry shortly');

  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
  ctx.body = stream;

  if (prepared.kind === 'quota_exceeded') {
    write({ delta: QUOTA_PLACEHOLDER, notice: 'outage' });
    write({ done: true, session_id: prepared.sessionId, handoff: false, quota_exceeded: true, notice: 'outage' });
    stream.end();
    return;
  }

  void (async () => {
    let handoff = false;
    try {
      const result = await turnOutcome(cdeps, prepared, subscription, prepared.update.runId);
      handoff = result.handoff === true;
      if (result.error) {
        const e = turnError(result.error, prepared.sessionId);
        write(e.code === 'internal_error' ? { error: e.message } : { error: e.message, code: e.code, ...(e.extra.retry_after ? { retry_after: e.extra.retry_after } : {}) });
      } else if (handoff) {
        // Escalation arrives as an ordinary fragment; with an operator already live there is none.
        if (result.answer) write({ delta: result.answer });
      } else {
        const final = result.answer;
        // Fragments published before the turn completed may still be on their way through LISTEN.
        const settleBy = Date.now() + 1_000;
        while (streamed.length < final.length && final.startsWith(streamed) && Date.now() < settleBy) {
          await new Promise((r) => setTimeout(r, 10));
        }
        if (final.startsWith(streamed)) {
          if (final.length > streamed.length) write({ delta: final.slice(streamed.length) });
        } else {
          write({ error: 'The answer was interrupted and regenerated; the complete answer is in the transcript' });
        }
      }
    } catch (err) {
      ctx.state.log.error({ err }, 'stream turn failed');
      write({ error: 'Internal error; it is safe to retry' });
    } finally {
      subscription?.close();
      write({ done: true, session_id: prepared.sessionId, handoff, quota_exceeded: false });
      stream.end();
    }
  })();
}
