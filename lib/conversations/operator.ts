import { createHash, randomUUID } from 'node:crypto';
import {
  type MessageAttachment,
  type OperatorReplyResult,
  type ResolveResult,
  operatorReplyUpdate,
  resolveUpdate,
} from '../../workflows/contracts/conversation';
import type { Db } from '../db';
import { LIMITS } from '../limits';
import type { ConversationDeps } from './deps';
import { recordNote } from './events';
import { withStoredImage } from './images';
import { attachmentView } from './poll';
import { conversationOf, updateConversation } from './sessions';
import {
  type InboxOptions,
  type Page,
  type VisitorPanel,
  listInbox,
  listThreads as readThreads,
  readTranscript,
  readVisitorPanel,
} from './views';

/*
 * The team's side of a conversation (the operator API and the dashboard's inbox): open requests, transcripts, the
 * visitor panel, replies and images, notes, typing, and closing a request.
 */

/** Open requests (handed to a person, `waiting` or `operator`), most recently handed over first. */
export function listThreads(deps: ConversationDeps, botId: string, page: Page) {
  return readThreads(deps.db, botId, page);
}

/**
 * The dashboard's inbox: conversations of every bot of a workspace (or one), with the bot's name. `open`: requests
 * handed to a person, as the operator API lists them; `all`: every conversation, latest activity first.
 */
export function inbox(deps: ConversationDeps, workspaceId: string, opts: InboxOptions) {
  return listInbox(deps.db, workspaceId, opts);
}

/** The full transcript, messages and events; opening it tells the visitor an operator is reading. */
export async function transcript(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  page: Page,
  mediaBaseUrl: string,
  opts: { authorNames?: boolean } = {},
) {
  return readTranscript(deps.db, await conversationOf(deps.db, botId, sessionId), page, mediaBaseUrl, opts);
}

/** Who the visitor is and their other conversations with the agent: the inbox's visitor panel. */
export async function visitorPanel(deps: ConversationDeps, botId: string, sessionId: string): Promise<VisitorPanel> {
  return readVisitorPanel(deps.db, await conversationOf(deps.db, botId, sessionId));
}

/** An operator reply: reaches the visitor at the next poll; the conversation becomes `operator`. */
export async function operatorReply(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  text: string,
  replyScope?: string,
  authorName?: string,
): Promise<OperatorReplyResult> {
  const conversation = await conversationOf(deps.db, botId, sessionId);
  // A retried reply (same Idempotency-Key) is the same update: Temporal applies it once.
  const messageId = operatorMessageId('reply', replyScope);
  return updateConversation(
    deps,
    conversation,
    operatorReplyUpdate,
    [{ messageId, text, at: Date.now(), ...(authorName ? { authorName } : {}) }],
    messageId,
  );
}

/**
 * A reply from the dashboard: the visitor sees the replying person's name (their first word of it). `replyScope`: the
 * same reply sent again (its Idempotency-Key) is the same message.
 */
export async function operatorReplyFrom(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  text: string,
  userId: string,
  replyScope?: string,
) {
  return operatorReply(deps, botId, sessionId, text, replyScope, await firstNameOf(deps.db, userId));
}

/**
 * An operator sends an image from the dashboard: checked and stored like a visitor's (same limits and quotas), then an
 * operator reply holding it, signed with the person's first name; the visitor's widget shows it at the next poll and
 * the conversation becomes `operator`, as with a written reply.
 */
export async function operatorAttach(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  bytes: Buffer,
  opts: { mediaBaseUrl: string; userId: string; replyScope?: string },
) {
  const conversation = await conversationOf(deps.db, botId, sessionId);
  const messageId = operatorMessageId('attach', opts.replyScope);
  if (opts.replyScope) {
    // Sent again after its answer was lost: the message is there already, and its image is not stored twice.
    const sent = await deps.db.query<{ at: string; attachment: MessageAttachment }>(
      `SELECT at, attachment FROM messages WHERE id = $1 AND session_id = $2 AND attachment IS NOT NULL`,
      [messageId, sessionId],
    );
    if (sent.rows[0]) {
      const { at, attachment } = sent.rows[0];
      return {
        message: {
          id: messageId,
          author: 'operator' as const,
          text: '',
          at: Number(at),
          attachment: attachmentView(attachment, opts.mediaBaseUrl),
        },
        status: conversation.status,
      };
    }
  }
  const authorName = await firstNameOf(deps.db, opts.userId);
  const at = Date.now();
  let result: OperatorReplyResult | undefined;
  const view = await withStoredImage(deps, conversation, bytes, messageId, opts.mediaBaseUrl, async (attachment) => {
    result = await updateConversation(
      deps,
      conversation,
      operatorReplyUpdate,
      [{ messageId, text: '', at, attachment, ...(authorName ? { authorName } : {}) }],
      messageId,
    );
  });
  return {
    message: { id: messageId, author: 'operator' as const, text: '', at, attachment: view },
    status: result!.status,
  };
}

/** An internal note of the team (never shown to the visitor), signed with the writer's name. */
export async function addNote(deps: ConversationDeps, botId: string, sessionId: string, text: string, userId: string) {
  const conversation = await conversationOf(deps.db, botId, sessionId);
  const res = await deps.db.query<{ name: string | null; email: string }>(
    `SELECT name, email FROM users WHERE id = $1`,
    [userId],
  );
  const by = res.rows[0] ? res.rows[0].name?.trim() || res.rows[0].email : null;
  return recordNote(deps.db, conversation, { text, by });
}

/**
 * The operator is typing: the visitor's poll shows it for about 6 seconds; from the dashboard (`userId`) the rest of
 * the team sees who (lib/inbox/assignment.ts).
 */
export async function operatorTyping(
  deps: ConversationDeps,
  botId: string,
  sessionId: string,
  userId?: string,
): Promise<void> {
  const conversation = await conversationOf(deps.db, botId, sessionId);
  await deps.db.query(
    `UPDATE conversations SET operator_typing_until = now() + make_interval(secs => $2::double precision / 1000),
            operator_typing_by = $3
      WHERE session_id = $1`,
    [conversation.session_id, LIMITS.operatorTypingMs, userId ?? null],
  );
}

/** Closes the request: the bot answers again and `resolved` is sent; a conversation not handed over is unchanged. */
export async function resolve(deps: ConversationDeps, botId: string, sessionId: string): Promise<ResolveResult> {
  const conversation = await conversationOf(deps.db, botId, sessionId);
  return updateConversation(deps, conversation, resolveUpdate, [{ at: Date.now() }]);
}

/**
 * The id of a person's message (a reply, an image): from its scope when the request named one (the same reply sent
 * again is the same message, which the conversation applies once), else a new one.
 */
function operatorMessageId(kind: 'reply' | 'attach', scope: string | undefined): string {
  if (!scope) return `msg_op_${randomUUID()}`;
  return `msg_op_${createHash('sha256').update(`${kind}\n${scope}`).digest('hex').slice(0, 32)}`;
}

/** The first word of a person's name, as the visitor is told who answered; none without a name. */
async function firstNameOf(db: Db, userId: string): Promise<string | undefined> {
  const res = await db.query<{ name: string | null }>(`SELECT name FROM users WHERE id = $1`, [userId]);
  return res.rows[0]?.name?.trim().split(/\s+/)[0] || undefined;
}
