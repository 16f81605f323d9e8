/**
 * The inbox's rules apart from the DOM: the view in the address, how a visitor and
 * an author are named, a list line's preview, what is announced for a new message or request, day lines. Unit-tested
 * (test/unit/inbox-model.test.ts).
 */

/**
 * What the rules read of a message and of a list line: the contract's shapes (web/shared/contract.ts; the pages hand
 * them over, so the two cannot drift apart), written here so this file imports nothing and loads anywhere (a unit
 * test, a worker).
 */
interface Message {
  author: string;
  text: string;
  attachment?: unknown;
  event?: { kind: string; rating?: string; score?: number; by?: string; text?: string };
}
interface ThreadSummary {
  bot_name: string;
  last_message: { author: string; text: string } | null;
}
interface ListedThread {
  bot_id: string;
  session_id: string;
  status: string;
  bot_name: string;
  visitor_name: string | null;
  visitor_user: string | null;
}

/** How often the list and an open transcript are read again (the contract's ~3 s and ~2 s). */
export const LIST_POLL_MS = 3_000;
export const THREAD_POLL_MS = 2_000;
/** After failures the polls slow down to this, and speed up again at the first success. */
export const MAX_BACKOFF_MS = 15_000;
/** Typing signals: at most one per this long while the operator types (the visitor sees it for ~6 s). */
export const TYPING_EVERY_MS = 3_000;
/** How often "2 min ago" is written again while the page is open all day. */
export const RELATIVE_TIMES_MS = 30_000;

/** Open requests, the open requests assigned to the signed-in person, or every recent conversation. */
export type StatusFilter = 'open' | 'mine' | 'all';

export interface View {
  status: StatusFilter;
  agent: string;
  bot: string;
  session: string;
}

export function viewFrom(search: URLSearchParams): View {
  return {
    status: search.get('status') === 'all' ? 'all' : search.get('status') === 'mine' ? 'mine' : 'open',
    agent: search.get('agent') ?? '',
    bot: search.get('bot') ?? '',
    session: search.get('session') ?? '',
  };
}

export function addressOf(view: View): string {
  const q = new URLSearchParams();
  if (view.status !== 'open') q.set('status', view.status);
  if (view.agent) q.set('agent', view.agent);
  if (view.bot && view.session) {
    q.set('bot', view.bot);
    q.set('session', view.session);
  }
  const s = q.toString();
  return s ? `/inbox?${s}` : '/inbox';
}

export const threadKey = (bot: string, session: string) => `${bot}/${session}`;

/** The list's heading for each view. */
export const LIST_TITLE: Record<StatusFilter, string> = {
  open: 'Open requests',
  mine: 'Assigned to you',
  all: 'Recent conversations',
};

/** What an empty list says, for each view. */
export const EMPTY_LIST: Record<StatusFilter, { title: string; hint: string }> = {
  open: {
    title: 'No one is waiting for a person',
    hint: 'When a visitor asks for a person, the request appears here at once.',
  },
  mine: {
    title: 'Nothing is assigned to you',
    hint: 'Requests you reply to, or that someone assigns to you, appear here.',
  },
  all: { title: 'No recent conversations', hint: 'Conversations with your agents appear here as they happen.' },
};

/** The status of each listed conversation by its key: what the next read is compared with. */
export const statusesOf = (threads: ListedThread[]) =>
  new Map(threads.map((t) => [threadKey(t.bot_id, t.session_id), t.status]));

/**
 * Requests that arrived (or went back to waiting) since the list was last read, as a screen reader hears them; none
 * on the first read (`before` undefined).
 */
export function arrivalsAnnouncement(before: Map<string, string> | undefined, threads: ListedThread[]): string {
  if (!before) return '';
  const arrivals = threads.filter(
    (t) => t.status === 'waiting' && before.get(threadKey(t.bot_id, t.session_id)) !== 'waiting',
  );
  if (arrivals.length === 1) {
    const [t] = arrivals;
    return `New request from ${visitorName(t.visitor_name || t.visitor_user, t.session_id)}, ${t.bot_name}.`;
  }
  return arrivals.length > 1 ? `${arrivals.length} new requests.` : '';
}

/** The visitor's own id when the site said who they are; else a short tag from the session id, to tell them apart. */
export function visitorName(user: string | null | undefined, session: string): string {
  return user?.trim() || `Visitor ${session.replace(/[^a-z0-9]/gi, '').slice(-6) || session.slice(0, 6)}`;
}

export function statusInfo(status: string): { label: string; tone: 'warning' | 'success' | 'neutral' } {
  if (status === 'waiting') return { label: 'Waiting', tone: 'warning' };
  if (status === 'operator') return { label: 'With a person', tone: 'success' };
  if (status === 'bot') return { label: 'Assistant', tone: 'neutral' };
  return { label: status, tone: 'neutral' };
}

export const isOpen = (status: string) => status === 'waiting' || status === 'operator';

export function authorLabel(author: string, botName?: string, authorName?: string): string {
  if (author === 'visitor') return 'Visitor';
  if (author === 'bot') return botName || 'Assistant';
  // A reply written in the dashboard names its writer; one through the operator API is the team's.
  if (author === 'operator') return authorName || 'Team';
  return '';
}

/** A line of the list: what was said last, by whom. */
export function preview(thread: ThreadSummary): string {
  const last = thread.last_message;
  if (!last) return 'No messages yet';
  // The API writes an image without a caption as `[image]`.
  const flat = last.text.replace(/\s+/g, ' ').trim();
  const text = !flat || flat === '[image]' ? 'Sent an image' : flat;
  const who = authorLabel(last.author, thread.bot_name);
  return who ? `${who}: ${text}` : text;
}

export function announcementOf(m: Message, botName?: string): string {
  if (m.author === 'event') {
    if (m.event?.kind === 'rating')
      return `The visitor rated an answer ${m.event.rating === 'up' ? 'helpful' : 'not helpful'}.`;
    if (m.event?.kind === 'contact') return 'The visitor left a contact.';
    if (m.event?.kind === 'satisfaction') return `The visitor rated the help ${m.event.score ?? '?'} of 5.`;
    if (m.event?.kind === 'note') return `Internal note${m.event.by ? ` by ${m.event.by}` : ''}: ${m.event.text ?? ''}`;
    return m.text;
  }
  if (m.attachment && m.author === 'visitor') return 'The visitor sent an image.';
  const who = authorLabel(m.author, botName);
  return who ? `${who}: ${m.text}` : m.text;
}

export const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long' });
export const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

export function dayLabel(ms: number): string {
  const d = new Date(ms);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (d.toDateString() === today.toDateString()) return 'Today';
  if (d.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return dayFormat.format(d);
}

export function clip(text: string, max = 140): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A contact a visitor left, as a link: mailto for an e-mail address, tel for a phone number, none otherwise. */
export function contactHref(contact: string): string | undefined {
  if (/^[^\s@]+@[^\s@]+$/.test(contact)) return `mailto:${contact}`;
  if (/^\+?[\d\s().-]{5,}$/.test(contact)) return `tel:${contact.replace(/[^\d+]/g, '')}`;
  return undefined;
}

/** Who handles a conversation, as the list and the thread say it: "you" for the signed-in person. */
export function assigneeLabel(assignee: { id: string; name: string } | null, me: string): string | null {
  if (!assignee) return null;
  return assignee.id === me ? 'You' : assignee.name;
}
