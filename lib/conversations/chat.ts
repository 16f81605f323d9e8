import type { z } from 'zod';
import type { ChatResponse } from '../schemas/conversation';
import type { TurnResult } from '../../workflows/contracts/conversation';
import { type ApiError, apiErrorForFailure, errors } from '../errors';
import { signVisitorConfirmation } from '../identity';
import { answerMessageId } from '../runs/bookkeeping';
import type { ConversationDeps } from './deps';
import { loadBot, quotaExceededReply } from './sessions';
import { type ChatInput, type TurnFailure, prepareChat, runTurn, subscribeTurn, visitorFailure } from './turn';

/** Spec, ChatResponse: one of its three modes (the schema's type: lib/schemas/conversation.ts). */
export type ChatReply = z.infer<typeof ChatResponse>;

/** When the team is back after a handoff outside business hours (Unix ms; null: no opening ahead). */
export type AfterHoursView = NonNullable<ChatReply['after_hours']>;

export function afterHoursField(result: Pick<TurnResult, 'afterHours'>): { after_hours?: AfterHoursView } {
  return result.afterHours ? { after_hours: { back_at: result.afterHours.backAt } } : {};
}

/** A chat turn's reply, and the ids of the messages it wrote (the widget rates answers by their id). */
export interface ChatTurn {
  reply: ChatReply;
  /** The visitor's message, absent when nothing was stored (monthly quota used up). */
  visitorMessageId?: string;
  /** The bot's answer, present when the bot answered. */
  answerMessageId?: string;
}

/**
 * A failed turn as the JSON endpoints answer it. Spec, Conversation: 503 `{error, code, session_id}`, plus
 * `retry_after` and `Retry-After` when overloaded. Temporal or Postgres out of reach is 503 `service_unavailable`, as
 * the error handler answers any unreachable dependency. A turn that goes on keeps the request's `Idempotency-Key` on
 * it (`turnPending`): a retry joins it (the same update id) instead of sending the visitor's message a second time.
 */
export function turnError(failure: TurnFailure, sessionId: string): ApiError {
  const e =
    failure.kind === 'unreachable'
      ? Object.assign(errors.serviceUnavailable(), { cause: failure.cause })
      : apiErrorForFailure(visitorFailure(failure), { session_id: sessionId });
  e.turnPending = failure.stillRunning;
  return e;
}

/**
 * A chat turn with the ids of the messages it wrote (the widget's chat; `answer` for the API's): prepare → subscribe
 * → run (lib/conversations/turn.ts) → the reply, or its failure as an `ApiError`.
 */
export async function converse(
  deps: ConversationDeps,
  botId: string,
  input: ChatInput,
  turnScope?: string,
): Promise<ChatTurn> {
  const prepared = await prepareChat(deps, botId, input, turnScope);
  if (prepared.kind === 'quota_exceeded') return { reply: quotaExceededReply(prepared.sessionId) };
  const subscription = await subscribeTurn(deps, prepared.update.runId);
  const outcome = await runTurn(deps, prepared, subscription).finally(() => subscription?.close());
  if (!outcome.ok) throw turnError(outcome.failure, prepared.sessionId);
  const { result } = outcome;
  return {
    reply: {
      answer: result.answer,
      session_id: prepared.sessionId,
      ...(result.sources ? { sources: result.sources } : {}),
      ...(result.handoff ? { handoff: true as const } : {}),
      ...(result.handoffOffered ? { handoff_offered: true as const } : {}),
      ...afterHoursField(result),
    },
    visitorMessageId: prepared.update.messageId,
    ...(result.handoff ? {} : { answerMessageId: answerMessageId(prepared.update.runId) }),
  };
}

/** One chat turn answered as one JSON body (`POST /v1/api/chat`). */
export async function answer(
  deps: ConversationDeps,
  botId: string,
  input: ChatInput,
  turnScope?: string,
): Promise<ChatReply> {
  return (await converse(deps, botId, input, turnScope)).reply;
}

/**
 * A visitor's turn (`answer`, `openStream`) as the dashboard's test chat (contract, Visitor identity confirmation rule 6): a turn in
 * which the signed-in user is confirmed as the bot's administrator, with a confirmation signed by the bot's own
 * identity secret.
 */
export function asTestChat<R>(turn: (deps: ConversationDeps, botId: string, input: ChatInput) => Promise<R>) {
  return async (
    deps: ConversationDeps,
    botId: string,
    userId: string,
    input: { session_id?: string; message: string },
  ) => turn(deps, botId, { ...input, user_auth: await adminConfirmation(deps, botId, userId) });
}

/** The dashboard's test chat, answered as one JSON body. */
export const testChat = asTestChat(answer);

/**
 * The signed-in person as the bot's administrator for one test-chat turn (contract, Visitor identity confirmation rule 6): a visitor
 * confirmation signed with the bot's identity secret, valid five minutes.
 */
async function adminConfirmation(
  deps: Pick<ConversationDeps, 'db' | 'secrets'>,
  botId: string,
  userId: string,
): Promise<string> {
  const bot = await loadBot(deps.db, botId);
  return signVisitorConfirmation(
    { user: `dashboard:${userId}`, role: 'admin', bot: botId, exp: Math.floor(Date.now() / 1000) + 300 },
    deps.secrets.open(bot.identity_secret_sealed),
  );
}
