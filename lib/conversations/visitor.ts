import { WorkflowUpdateFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { failureInfo } from '../../workflows/failures';
import { type HandoffResult, handoffUpdate, visitorAttachmentUpdate } from '../../workflows/contracts/conversation';
import { apiErrorForFailure, errors } from '../errors';
import { LIMITS } from '../limits';
import type { AfterHoursView, ChatReply } from './chat';
import type { ConversationDeps } from './deps';
import { type ContactInput, type SatisfactionInput, recordContact, recordRating, recordSatisfaction } from './events';
import { withStoredImage } from './images';
import type { AttachmentView } from './poll';
import {
  conversationOf,
  findOrStartConversation,
  handoffAfterHours,
  loadBot,
  quotaExceededReply,
  updateConversation,
} from './sessions';

/*
 * The visitor's side of a conversation besides chat turns (chat.ts, stream.ts) and polling (poll.ts): asking for a
 * person, typing, ratings and contacts, images.
 */

/**
 * `POST /v1/api/handoff`: 404 when handoff is off for the bot or the session is another bot's. A session with no
 * message yet (a "talk to a person" button pressed first) starts here, bound to this bot, and goes to `waiting` with
 * `escalated` sent; a used-up monthly quota starts nothing (`quota_exceeded`, as a chat would answer).
 */
export async function handoff(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
): Promise<{ status: HandoffResult['status']; quota_exceeded?: true; after_hours?: AfterHoursView }> {
  const bot = await loadBot(deps.db, botId);
  if (!bot.handoff_enabled) throw errors.notFound('Handoff is disabled for this bot');
  const conversation = await findOrStartConversation(deps.db, bot, sessionId, { checkQuota: true });
  if (!conversation) return { status: 'bot', quota_exceeded: true };
  try {
    const afterHours = handoffAfterHours(bot);
    const result = await updateConversation(deps, conversation, handoffUpdate, [
      { handoffEnabled: bot.handoff_enabled, at: Date.now(), ...(afterHours ? { afterHours } : {}) },
    ]);
    return {
      status: result.status,
      ...(result.afterHours ? { after_hours: { back_at: result.afterHours.backAt } } : {}),
    };
  } catch (err) {
    // The workflow decides with the settings it was sent; its refusal (`handoff_disabled`) is the same 404.
    if (err instanceof WorkflowUpdateFailedError && (err.cause as { type?: string } | undefined)?.type) {
      throw apiErrorForFailure(failureInfo(err));
    }
    throw err;
  }
}

/** The visitor is typing: shown to operators for about 6 seconds. */
export async function visitorTyping(deps: ConversationDeps, botId: string, sessionId: string): Promise<void> {
  const res = await deps.db.query(
    `UPDATE conversations SET visitor_typing_until = now() + make_interval(secs => $3::double precision / 1000)
      WHERE session_id = $1 AND bot_id = $2`,
    [sessionId, botId, LIMITS.operatorTypingMs],
  );
  if (!res.rowCount) throw errors.notFound('No conversation with this session_id');
}

/**
 * A visitor rates one of the bot's answers (contract, Message: a `rating` event); rating it again replaces the rating.
 * 404 for an answer that is not the bot's in this conversation.
 */
export async function rate(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  ref: string,
  rating: 'up' | 'down',
): Promise<void> {
  await recordRating(deps.db, await conversationOf(deps.db, botId, sessionId), ref, rating);
}

/** The visitor says how the help went once a person resolved the conversation (409 before any resolution). */
export async function rateSatisfaction(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  input: SatisfactionInput,
): Promise<void> {
  await recordSatisfaction(deps.db, await conversationOf(deps.db, botId, sessionId), input);
}

/**
 * A visitor leaves a way to reach them (contract, Message: a `contact` event), also a dashboard notification. Accepted
 * before any message and with the monthly quota used up: it is how a visitor reaches the team when the chat cannot
 * (docs/decisions/078-ratings-contacts-events.md), so the conversation starts here without the quota check.
 */
export async function leaveContact(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  contact: ContactInput,
): Promise<void> {
  const bot = await loadBot(deps.db, botId);
  const conversation = await findOrStartConversation(deps.db, bot, sessionId, { checkQuota: false });
  if (!conversation) throw errors.notFound('No conversation with this session_id');
  await recordContact(deps.db, conversation, contact);
}

/**
 * A visitor attaches an image (the widget): checked and stored (lib/media), then a message of the conversation
 * holding it, written by the conversation workflow so it lands in order and, while a person handles the
 * conversation, is forwarded to them (`visitor_message`). A new conversation counts against the monthly quota like a
 * first message; over it, nothing is stored.
 */
export async function attach(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  bytes: Buffer,
  opts: { mediaBaseUrl: string; user?: string },
): Promise<
  | { kind: 'stored'; message: { id: string; author: 'visitor'; text: string; at: number; attachment: AttachmentView } }
  | { kind: 'quota_exceeded'; reply: ChatReply }
> {
  const bot = await loadBot(deps.db, botId);
  const conversation = await findOrStartConversation(deps.db, bot, sessionId, { checkQuota: true });
  if (!conversation) return { kind: 'quota_exceeded', reply: quotaExceededReply(sessionId) };
  const message = { id: `msg_${randomUUID().replace(/-/g, '')}`, at: Date.now() };
  const view = await withStoredImage(deps, conversation, bytes, message.id, opts.mediaBaseUrl, (attachment, url) =>
    updateConversation(
      deps,
      conversation,
      visitorAttachmentUpdate,
      [{ messageId: message.id, attachment, url, at: message.at, user: opts.user }],
      message.id,
    ),
  );
  return {
    kind: 'stored',
    message: { id: message.id, author: 'visitor', text: '', at: message.at, attachment: view },
  };
}
