/**
 * The inbox's calls: conversations handed to the team, their transcripts, replies, notes, images, assignment, typing,
 * resolve, and the workspace's saved replies. Shapes are the contract's; unknown enumerated values (authors, event
 * kinds, statuses) are passed through for the pages to show as text.
 */
import type {
  InboxMessage,
  InboxThread,
  InboxTranscript,
  SavedReplyView,
  Teammate,
  VisitorPanel,
} from '../../../shared/contract';
import type { BotSummary } from './agents';
import { call, query, seg } from './client';

export type { Attachment, MessageEvent, Teammate, VisitorPanel } from '../../../shared/contract';
/** A message of the inbox's transcript (a dashboard reply names its writer). */
export type Message = InboxMessage;
export type Transcript = InboxTranscript;
export type ThreadSummary = InboxThread;
export type SavedReply = SavedReplyView;

const thread = (bot: string, sid: string) => `/v1/dashboard/bots/${seg(bot)}/threads/${seg(sid)}`;

export const inboxApi = {
  savedReplies: () => call<{ replies: SavedReply[] }>('GET', '/v1/dashboard/saved-replies'),
  saveReply: (body: { title: string; text: string }) => call<SavedReply>('POST', '/v1/dashboard/saved-replies', body),
  deleteSavedReply: (id: string) =>
    call<{ status: string }>('DELETE', `/v1/dashboard/saved-replies/${encodeURIComponent(id)}`),
  bots: () => call<{ bots: BotSummary[] }>('GET', '/v1/dashboard/bots'),
  threads: (p: { status: 'open' | 'all'; assignee?: 'me' | 'nobody'; botId?: string; limit: number }) =>
    call<{ threads: ThreadSummary[]; next_cursor: string }>(
      'GET',
      `/v1/dashboard/inbox${query({ status: p.status, assignee: p.assignee, bot_id: p.botId, limit: p.limit })}`,
    ),
  transcript: (bot: string, sid: string, cursor: string | undefined, limit: number) =>
    call<Transcript>('GET', `${thread(bot, sid)}${query({ cursor, limit })}`),
  note: (bot: string, sid: string, text: string) => call<Message>('POST', `${thread(bot, sid)}/notes`, { text }),
  visitor: (bot: string, sid: string) => call<VisitorPanel>('GET', `${thread(bot, sid)}/visitor`),
  /** `key`: the same for every try of one reply, so a reply whose answer was lost is stored once when sent again. */
  reply: (bot: string, sid: string, text: string, key: string) =>
    call<{ id: string; at: number; status: string }>(
      'POST',
      `${thread(bot, sid)}/reply`,
      { text },
      { 'Idempotency-Key': key },
    ),
  /** Sends the visitor an image as a reply from the signed-in person. */
  attach: (bot: string, sid: string, file: Blob, key: string) =>
    call<{ message: Message; status: string }>('POST', `${thread(bot, sid)}/attachments`, file, {
      'Idempotency-Key': key,
    }),
  assign: (bot: string, sid: string, userId: string | null) =>
    call<{ assignee: Teammate | null }>('POST', `${thread(bot, sid)}/assign`, { user_id: userId }),
  typing: (bot: string, sid: string) => call<{ status: string }>('POST', `${thread(bot, sid)}/typing`),
  resolve: (bot: string, sid: string) =>
    call<{ status: string; resolved: boolean }>('POST', `${thread(bot, sid)}/resolve`),
};
