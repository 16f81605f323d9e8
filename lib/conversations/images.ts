import type { MessageAttachment } from '../../workflows/contracts/conversation';
import type { ConversationDeps } from './deps';
import { type AttachmentView, attachmentView } from './poll';
import type { ConversationRow } from './sessions';

/**
 * Stores an image of the conversation (lib/media: checked, quotas) and has `send` write the message `messageId`
 * holding it — a visitor's (visitor.ts) or an operator's (operator.ts). When that fails and no message holds the file
 * (Temporal unreachable, the update refused), the file is discarded; if the update did apply and only its answer was
 * lost, the message holds the file and it stays.
 */
export async function withStoredImage(
  deps: Pick<ConversationDeps, 'db' | 'media'>,
  conversation: ConversationRow,
  bytes: Buffer,
  messageId: string,
  mediaBaseUrl: string,
  send: (attachment: MessageAttachment, url: string) => Promise<unknown>,
): Promise<AttachmentView> {
  const attachment = await deps.media.save({ botId: conversation.bot_id, sessionId: conversation.session_id, bytes });
  const view = attachmentView(attachment, mediaBaseUrl);
  try {
    await send(attachment, view.url);
  } catch (err) {
    const held = await deps.db
      .query(`SELECT 1 FROM messages WHERE id = $1`, [messageId])
      .then((r) => Boolean(r.rowCount))
      .catch(() => true);
    if (!held) await deps.media.discard(attachment.id).catch(() => undefined);
    throw err;
  }
  return view;
}
