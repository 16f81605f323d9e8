/**
 * The operator pages' calls (inbox, notifications, billing, team), over the shell's client: same origin, session
 * cookie, `{error, code}` failures as `Result`s. Shapes are the dashboard contract's; fields this file does not name
 * are ignored, and unknown enumerated values (authors, event kinds, statuses) are passed through for the pages to
 * show as text.
 */
import type {
  BuilderKey,
  InboxMessage,
  InboxThread,
  InboxTranscript,
  Invitation,
  LedgerEntry as LedgerEntryView,
  NotificationView,
  PlanView,
  RotatedKey,
  SavedReplyView,
  SeenKey,
  TeamMember,
  Teammate,
  UsageView,
  VisitorPanel,
} from '../../../shared/contract';
import type { BotSummary } from './agents';
import { call, query, seg } from './client';

export type {
  Attachment,
  BuilderKey,
  RotatedKey,
  SeenKey,
  Invitation,
  MessageEvent,
  Teammate,
  VisitorPanel,
} from '../../../shared/contract';
/** A message of the inbox's transcript (a dashboard reply names its writer). */
export type Message = InboxMessage;
export type Transcript = InboxTranscript;
export type ThreadSummary = InboxThread;
export type Member = TeamMember;

export type Role = 'owner' | 'admin' | 'operator';

// ---------- inbox ----------

export type { BotSummary } from './agents';

const thread = (bot: string, sid: string) => `/v1/dashboard/bots/${seg(bot)}/threads/${seg(sid)}`;

export type SavedReply = SavedReplyView;

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
  transcript: (bot: string, sid: string, cursor?: string, limit = 200) =>
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

// ---------- notifications ----------

export type Notification = NotificationView;

export const notificationsApi = {
  list: () => call<{ notifications: Notification[]; unread?: number }>('GET', '/v1/dashboard/notifications'),
  /** No ids: every notification of the workspace. */
  markRead: (ids?: string[]) =>
    call<{ status: string }>('POST', '/v1/dashboard/notifications/read', ids ? { ids } : {}),
};

// ---------- billing ----------

export type Plan = PlanView;

export type Usage = UsageView;

export type LedgerEntry = LedgerEntryView;

export const billingApi = {
  /** `checkout`: the plans that can be bought here (empty without a payment provider). */
  plans: () =>
    call<{ plans: Plan[]; current: string; checkout?: string[]; paid?: boolean }>('GET', '/v1/billing/plans'),
  /** Opens the payment provider's checkout for a plan: the page to send the person to. */
  checkout: (plan: string) => call<{ url: string }>('POST', '/v1/billing/checkout', { plan }),
  usage: (days = 30) => call<Usage>('GET', `/v1/billing/usage${query({ days })}`),
  ledger: (cursor?: string, limit = 20) =>
    call<{ entries: LedgerEntry[]; next_cursor: string }>('GET', `/v1/billing/ledger${query({ cursor, limit })}`),
};

// ---------- team ----------

export const teamApi = {
  list: () => call<{ members: Member[]; invitations: Invitation[] }>('GET', '/v1/dashboard/team'),
  invite: (email: string, role: 'admin' | 'operator') =>
    call<{ invitation: Invitation; invite_url: string }>('POST', '/v1/dashboard/team/invitations', {
      email,
      role,
    }),
  revoke: (id: string) => call<{ status: string }>('DELETE', `/v1/dashboard/team/invitations/${seg(id)}`),
  setRole: (uid: string, role: 'admin' | 'operator') =>
    call<Member & Revoked>('PATCH', `/v1/dashboard/team/members/${seg(uid)}`, { role }),
  remove: (uid: string) => call<{ status: string } & Revoked>('DELETE', `/v1/dashboard/team/members/${seg(uid)}`),
  builderKeys: () => call<{ builder_keys: BuilderKey[] }>('GET', '/v1/dashboard/team/builder-keys'),
  revokeBuilderKey: (id: string) => call<{ status: string }>('DELETE', `/v1/dashboard/team/builder-keys/${seg(id)}`),
  seenKeys: () =>
    call<{ seen_keys: SeenKey[]; rotate_keys_on_departure: boolean }>('GET', '/v1/dashboard/team/seen-keys'),
  /** Rotates the keys in force that people who left saw (one person's with `userId`); idempotent. */
  rotateSeenKeys: (userId?: string) =>
    call<{ rotated: RotatedKey[] }>('POST', '/v1/dashboard/team/seen-keys/rotate', userId ? { user_id: userId } : {}),
  setRotateOnDeparture: (rotate: boolean) =>
    call<{ rotate_keys_on_departure: boolean }>('PUT', '/v1/dashboard/team/seen-keys/settings', {
      rotate_keys_on_departure: rotate,
    }),
};

/**
 * What a removal or a demotion took with it: the builder keys and pending invitations the person had issued, the keys
 * in force they were shown (to rotate), or those rotated at once by the workspace's setting (new values, shown once).
 */
export interface Revoked {
  revoked_builder_keys: number;
  revoked_invitations: number;
  keys_seen: SeenKey[];
  rotated_keys: RotatedKey[];
}
