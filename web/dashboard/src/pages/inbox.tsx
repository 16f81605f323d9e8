import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Failure } from '../api/client';
import { type Message, type ThreadSummary, type Transcript, inboxApi } from '../api/ops';
import { navigate, usePlace } from '../router';
import { useSession } from '../session';
import { Badge, Button, ErrorBox, Loading, Page, describeFailure, formatDateTime, formatRelative } from '../ui';
import { alertsOn, switchAlerts } from '../alerts';
import { usePolling } from '../use-polling';
import { Linkified, MarkdownText } from '../../../shared/markdown-view';
import './ops.css';

/**
 * `/inbox`: the operator's inbox. Requests handed to a person (or, toggled, every recent conversation) refresh every
 * few seconds in place; one opens beside the list (under it on phones) with its transcript, which polls with the
 * API's cursor for new messages and events, a reply box that tells the visitor the operator is typing, and Resolve.
 * The address holds the view (`?bot=&session=`, `&status=all`, `&agent=`), so a reload or a shared link opens the
 * same conversation. New messages and requests are announced politely to screen readers.
 */

/** How often the list and an open transcript are read again (the contract's ~3 s and ~2 s). */
const LIST_POLL_MS = 3_000;
const THREAD_POLL_MS = 2_000;
/** After failures the polls slow down to this, and speed up again at the first success. */
const MAX_BACKOFF_MS = 15_000;
/** Typing signals: at most one per this long while the operator types (the visitor sees it for ~6 s). */
const TYPING_EVERY_MS = 3_000;
const PAGE_STEP = 50;
const MAX_PAGE = 200;
const MAX_REPLY = 8000;

type StatusFilter = 'open' | 'all';

interface View {
  status: StatusFilter;
  agent: string;
  bot: string;
  session: string;
}

function viewFrom(search: URLSearchParams): View {
  return {
    status: search.get('status') === 'all' ? 'all' : 'open',
    agent: search.get('agent') ?? '',
    bot: search.get('bot') ?? '',
    session: search.get('session') ?? '',
  };
}

function addressOf(view: View): string {
  const q = new URLSearchParams();
  if (view.status === 'all') q.set('status', 'all');
  if (view.agent) q.set('agent', view.agent);
  if (view.bot && view.session) {
    q.set('bot', view.bot);
    q.set('session', view.session);
  }
  const s = q.toString();
  return s ? `/inbox?${s}` : '/inbox';
}

const threadKey = (bot: string, session: string) => `${bot}/${session}`;

/** The visitor's own id when the site said who they are; else a short tag from the session id, to tell them apart. */
export function visitorName(user: string | null | undefined, session: string): string {
  return user?.trim() || `Visitor ${session.replace(/[^a-z0-9]/gi, '').slice(-6) || session.slice(0, 6)}`;
}

function statusInfo(status: string): { label: string; tone: 'warning' | 'success' | 'neutral' } {
  if (status === 'waiting') return { label: 'Waiting', tone: 'warning' };
  if (status === 'operator') return { label: 'With a person', tone: 'success' };
  if (status === 'bot') return { label: 'Assistant', tone: 'neutral' };
  return { label: status, tone: 'neutral' };
}

const isOpen = (status: string) => status === 'waiting' || status === 'operator';

function authorLabel(author: string, botName?: string): string {
  if (author === 'visitor') return 'Visitor';
  if (author === 'bot') return botName || 'Assistant';
  if (author === 'operator') return 'Team';
  return '';
}

/** A line of the list: what was said last, by whom. */
function preview(thread: ThreadSummary): string {
  const last = thread.last_message;
  if (!last) return 'No messages yet';
  // The API writes an image without a caption as `[image]`.
  const flat = last.text.replace(/\s+/g, ' ').trim();
  const text = !flat || flat === '[image]' ? 'Sent an image' : flat;
  const who = authorLabel(last.author, thread.bot_name);
  return who ? `${who}: ${text}` : text;
}

/** Re-renders every 30 s, so "2 min ago" stays true while the page is open all day. */
function useNow(every = 30_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), every);
    return () => clearInterval(timer);
  }, [every]);
  return now;
}

type ListState =
  | { state: 'loading' }
  | { state: 'error'; failure: Failure }
  | { state: 'ready'; threads: ThreadSummary[]; more: boolean; stale?: Failure };

export function InboxPage() {
  const place = usePlace();
  const view = viewFrom(place.search);
  const selectedKey = view.bot && view.session ? threadKey(view.bot, view.session) : '';
  const filterKey = `${view.status}|${view.agent}`;

  const [list, setList] = useState<ListState>({ state: 'loading' });
  const [limit, setLimit] = useState(PAGE_STEP);
  const [bots, setBots] = useState<{ id: string; name: string }[]>([]);
  const [announcement, setAnnouncement] = useState('');
  /** The open conversation was pushed over the bare list in this page: Back is then history's back. */
  const overList = useRef(false);
  /** The open conversation was chosen here (not opened from the address): focus follows it. */
  const chosen = useRef(false);
  /** The list entry to give focus back to when a phone returns from a conversation. */
  const returnFocus = useRef('');
  const listRef = useRef<HTMLUListElement>(null);
  const now = useNow();

  const announce = (text: string) => {
    // The same words twice in a row would not be read again: clear, then set.
    setAnnouncement('');
    setTimeout(() => setAnnouncement(text), 50);
  };

  useEffect(() => {
    void inboxApi.bots().then((res) => {
      if (res.ok) setBots(res.value.bots.map((b) => ({ id: b.id, name: b.name })));
    });
  }, []);

  // The list: read now, then every few seconds. What is shown stays while it is read again (no flicker); a
  // changed filter starts from "loading", a longer page keeps the rows.
  const shownFilter = useRef('');
  const known = useRef<Map<string, string> | undefined>(undefined);
  useEffect(() => {
    const fresh = shownFilter.current !== filterKey;
    shownFilter.current = filterKey;
    known.current = undefined;
    if (fresh) setList({ state: 'loading' });
  }, [filterKey, limit]);
  const session = useSession();
  const refreshList = usePolling(
    async (stopped) => {
      const res = await inboxApi.threads({ status: view.status, botId: view.agent || undefined, limit });
      if (stopped()) return 'stop';
      if (!res.ok) {
        setList((prev) => (prev.state === 'ready' ? { ...prev, stale: res } : { state: 'error', failure: res }));
        return 'failed';
      }
      const threads = res.value.threads;
      // Requests that arrived (or went back to waiting) since the last read are announced.
      const before = known.current;
      if (before) {
        const arrivals = threads.filter(
          (t) => t.status === 'waiting' && before.get(threadKey(t.bot_id, t.session_id)) !== 'waiting',
        );
        if (arrivals.length === 1)
          announce(
            `New request from ${visitorName(arrivals[0].visitor_user, arrivals[0].session_id)}, ${arrivals[0].bot_name}.`,
          );
        else if (arrivals.length > 1) announce(`${arrivals.length} new requests.`);
      }
      known.current = new Map(threads.map((t) => [threadKey(t.bot_id, t.session_id), t.status]));
      setList({ state: 'ready', threads, more: Boolean(res.value.next_cursor) && limit < MAX_PAGE });
      return 'ok';
    },
    { everyMs: LIST_POLL_MS, maxBackoffMs: MAX_BACKOFF_MS },
    [filterKey, limit],
  );

  function go(next: Partial<View>, replace = false) {
    navigate(addressOf({ ...view, ...next }), { replace });
  }

  function select(thread: { bot_id: string; session_id: string }) {
    if (threadKey(thread.bot_id, thread.session_id) === selectedKey) return;
    overList.current = !selectedKey;
    chosen.current = true;
    returnFocus.current = threadKey(thread.bot_id, thread.session_id);
    go({ bot: thread.bot_id, session: thread.session_id });
  }

  function back() {
    returnFocus.current = selectedKey;
    if (overList.current) {
      overList.current = false;
      history.back();
    } else {
      go({ bot: '', session: '' }, true);
    }
  }

  // Back on a phone: the list comes back with focus on the conversation that was open.
  useEffect(() => {
    if (selectedKey || !returnFocus.current) return;
    const link = listRef.current?.querySelector<HTMLElement>(`[data-key="${CSS.escape(returnFocus.current)}"]`);
    returnFocus.current = '';
    link?.focus();
  }, [selectedKey]);

  /** Arrow keys move between the list's entries. */
  function listKeys(event: KeyboardEvent) {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp' && event.key !== 'Home' && event.key !== 'End') return;
    const links = [...(listRef.current?.querySelectorAll<HTMLElement>('a.thread-link') ?? [])];
    if (links.length === 0) return;
    const at = links.indexOf(document.activeElement as HTMLElement);
    let next: number;
    if (event.key === 'ArrowDown') next = Math.min(links.length - 1, at + 1);
    else if (event.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (event.key === 'Home') next = 0;
    else next = links.length - 1;
    event.preventDefault();
    links[next]?.focus();
  }

  const threads = list.state === 'ready' ? list.threads : [];
  const selectedSummary = threads.find((t) => threadKey(t.bot_id, t.session_id) === selectedKey);
  const waiting = threads.filter((t) => t.status === 'waiting').length;
  const botName =
    selectedSummary?.bot_name ?? bots.find((b) => b.id === view.bot)?.name ?? (view.bot ? 'Agent' : undefined);

  return (
    <Page
      title={waiting > 0 ? `Inbox (${waiting} waiting)` : 'Inbox'}
      heading="Inbox"
      description="Visitors who asked for a person. Reply, then resolve."
      actions={<AlertsToggle />}
      wide
    >
      <div class="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="inbox-announcer">
        {announcement}
      </div>
      <div class="inbox" data-view={selectedKey ? 'detail' : 'list'}>
        <section class="inbox-list" aria-labelledby="inbox-list-title">
          <div class="inbox-list-header">
            <h2 id="inbox-list-title" class="inbox-list-title">
              {view.status === 'open' ? 'Open requests' : 'Recent conversations'}
              {list.state === 'ready' && <span class="count-pill">{list.threads.length}</span>}
            </h2>
            <div class="inbox-filters">
              <fieldset class="inbox-show">
                <legend class="visually-hidden">Show</legend>
                <div class="segmented">
                  <label>
                    <input
                      type="radio"
                      name="inbox-status"
                      checked={view.status === 'open'}
                      onChange={() => go({ status: 'open' }, true)}
                    />
                    Open requests
                  </label>
                  <label>
                    <input
                      type="radio"
                      name="inbox-status"
                      checked={view.status === 'all'}
                      onChange={() => go({ status: 'all' }, true)}
                    />
                    All recent
                  </label>
                </div>
              </fieldset>
              {bots.length > 1 && (
                <div class="inbox-agent-filter">
                  <label for="inbox-agent" class="visually-hidden">
                    Agent
                  </label>
                  <select
                    id="inbox-agent"
                    value={view.agent}
                    onChange={(e) => go({ agent: (e.currentTarget as HTMLSelectElement).value }, true)}
                  >
                    <option value="">All agents</option>
                    {bots.map((b) => (
                      <option key={b.id} value={b.id}>
                        {b.name}
                      </option>
                    ))}
                  </select>
                </div>
              )}
            </div>
          </div>

          {list.state === 'loading' && <Loading label="Loading conversations…" />}
          {list.state === 'error' && (
            <div class="inbox-list-error">
              <ErrorBox failure={list.failure} onRetry={() => refreshList()} title="The inbox cannot be read." />
            </div>
          )}
          {list.state === 'ready' && list.stale && (
            <p class="stale-line" role="status">
              <span class="stale-dot" aria-hidden="true" /> Not refreshed: {describeFailure(list.stale)} Retrying…
            </p>
          )}
          {list.state === 'ready' && list.threads.length === 0 && (
            <div class="inbox-empty">
              <p class="empty-title">
                {view.status === 'open' ? 'No one is waiting for a person' : 'No recent conversations'}
              </p>
              <p class="muted small">
                {view.status === 'open'
                  ? 'When a visitor asks for a person, the request appears here at once.'
                  : 'Conversations with your agents appear here as they happen.'}
              </p>
            </div>
          )}
          {list.state === 'ready' && list.threads.length > 0 && (
            <ul class="thread-list" ref={listRef} onKeyDown={listKeys} data-testid="thread-list">
              {list.threads.map((t) => {
                const key = threadKey(t.bot_id, t.session_id);
                const st = statusInfo(t.status);
                const selected = key === selectedKey;
                return (
                  <li key={key}>
                    <a
                      class={`thread-link${selected ? ' selected' : ''}${t.status === 'waiting' ? ' thread-waiting' : ''}`}
                      href={addressOf({ ...view, bot: t.bot_id, session: t.session_id })}
                      aria-current={selected ? 'true' : undefined}
                      data-key={key}
                      data-testid="thread"
                      onClick={(e) => {
                        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                        e.preventDefault();
                        select(t);
                      }}
                    >
                      <span class="thread-top">
                        <span class="thread-visitor">{visitorName(t.visitor_user, t.session_id)}</span>
                        <time
                          class="thread-time"
                          dateTime={new Date(t.last_message_at).toISOString()}
                          title={formatDateTime(t.last_message_at)}
                        >
                          {formatRelative(t.last_message_at, now)}
                        </time>
                      </span>
                      <span class="thread-meta">
                        <Badge tone={st.tone}>{st.label}</Badge>
                        <span class="thread-agent">{t.bot_name}</span>
                        {t.status === 'waiting' && t.escalated_at && (
                          <span class="thread-wait">
                            waiting {formatRelative(t.escalated_at, now).replace(' ago', '')}
                          </span>
                        )}
                      </span>
                      {t.visitor_typing ? (
                        <span class="thread-preview thread-typing">
                          <TypingDots /> Visitor is typing…
                        </span>
                      ) : (
                        <span class="thread-preview">{preview(t)}</span>
                      )}
                    </a>
                  </li>
                );
              })}
            </ul>
          )}
          {list.state === 'ready' && list.more && (
            <div class="inbox-more">
              <Button small onClick={() => setLimit((n) => Math.min(MAX_PAGE, n + PAGE_STEP))}>
                Show more
              </Button>
            </div>
          )}
        </section>

        <section class="inbox-detail" aria-label="Conversation">
          {selectedKey ? (
            <ThreadView
              key={selectedKey}
              botId={view.bot}
              sessionId={view.session}
              botName={botName}
              summary={selectedSummary}
              focusOnOpen={chosen.current}
              onBack={back}
              announce={announce}
              onChanged={() => {
                // A reply or a resolve changes who is waiting: the list and the shell's count are read again.
                refreshList();
                session.refreshUnread();
              }}
            />
          ) : (
            <div class="detail-empty">
              <p class="empty-title">Select a conversation</p>
              <p class="muted small">
                Its messages, the visitor&rsquo;s rating and contact, and a reply box open here.
              </p>
            </div>
          )}
        </section>
      </div>
    </Page>
  );
}

function TypingDots() {
  return (
    <span class="typing-dots" aria-hidden="true">
      <span />
      <span />
      <span />
    </span>
  );
}

type ThreadState =
  | { state: 'loading' }
  | { state: 'error'; failure: Failure }
  | {
      state: 'ready';
      messages: Message[];
      status: string;
      visitorUser: string | null;
      visitorTyping: boolean;
      stale?: Failure;
    };

/**
 * One conversation: its transcript (read in pages, then polled with the cursor for what is new; messages are kept by
 * id, so a page read twice adds nothing), the visitor's typing, the reply box and Resolve.
 */
function ThreadView(props: {
  botId: string;
  sessionId: string;
  botName?: string;
  summary?: ThreadSummary;
  focusOnOpen: boolean;
  onBack: () => void;
  announce: (text: string) => void;
  onChanged: () => void;
}) {
  const { botId, sessionId } = props;
  // The polls outlive a render: they read the newest props through this.
  const latest = useRef(props);
  latest.current = props;
  const [thread, setThread] = useState<ThreadState>({ state: 'loading' });
  const [draft, setDraft] = useState('');
  const [sending, setSending] = useState(false);
  const [sendFailure, setSendFailure] = useState<Failure | undefined>();
  const [resolving, setResolving] = useState(false);
  const [resolveFailure, setResolveFailure] = useState<Failure | undefined>();
  const [resolvedNote, setResolvedNote] = useState(false);
  const [unseen, setUnseen] = useState(0);
  const cursor = useRef<string | undefined>(undefined);
  const byId = useRef(new Map<string, Message>());
  const lastTyping = useRef(0);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const heading = useRef<HTMLHeadingElement>(null);
  const replyBox = useRef<HTMLTextAreaElement>(null);
  const now = useNow();

  /** Adds what is new; returns the messages that were not known before. */
  function merge(messages: Message[]): Message[] {
    const added: Message[] = [];
    for (const m of messages) {
      if (!byId.current.has(m.id)) added.push(m);
      byId.current.set(m.id, m);
    }
    return added;
  }

  const ordered = () => [...byId.current.values()].sort((a, b) => a.at - b.at);

  async function readNew(): Promise<
    { ok: true; value: Transcript; added: Message[] } | { ok: false; failure: Failure }
  > {
    const added: Message[] = [];
    let last: Transcript | undefined;
    // Follow the pages to the end; the next poll continues after the last message read (`resume_cursor`), so it
    // reads only what is new.
    for (let page = 0; page < 50; page++) {
      const res = await inboxApi.transcript(botId, sessionId, cursor.current, 200);
      if (!res.ok) return { ok: false, failure: res };
      last = res.value;
      added.push(...merge(res.value.messages));
      cursor.current = res.value.resume_cursor;
      if (!res.value.next_cursor) break;
    }
    return { ok: true, value: last!, added };
  }

  // What the polling of this conversation has seen: the first read announces nothing, a status change is news.
  const seen = useRef({ first: true, status: '' });
  useEffect(() => {
    seen.current = { first: true, status: '' };
  }, [botId, sessionId]);
  const pollNow = usePolling(
    async (stopped) => {
      const res = await readNew();
      if (stopped()) return 'stop';
      if (!res.ok) {
        setThread((prev) =>
          prev.state === 'ready' ? { ...prev, stale: res.failure } : { state: 'error', failure: res.failure },
        );
        // A conversation that does not exist (or not in this workspace) is not asked about again.
        return res.failure.status === 404 || res.failure.status === 403 ? 'stop' : 'failed';
      }
      const t = res.value;
      const first = seen.current.first;
      // Its status changed under us (resolved elsewhere, or a person took it): the list is read again now.
      if (!first && t.status !== seen.current.status) latest.current.onChanged();
      seen.current = { first: false, status: t.status };
      setThread({
        state: 'ready',
        messages: ordered(),
        status: t.status,
        visitorUser: t.visitor_user,
        visitorTyping: t.visitor_typing,
      });
      if (!first) {
        const incoming = res.added.filter((m) => m.author !== 'operator');
        const said = incoming.map((m) => announcementOf(m, latest.current.botName));
        if (said.length > 0) latest.current.announce(said.slice(-3).join(' '));
        if (incoming.length > 0 && !stick.current) setUnseen((n) => n + incoming.length);
      }
      return 'ok';
    },
    { everyMs: THREAD_POLL_MS, maxBackoffMs: MAX_BACKOFF_MS },
    [botId, sessionId],
  );

  // The newest message stays in view, unless the operator scrolled up to read; then a button says how many came.
  const count = thread.state === 'ready' ? thread.messages.length : 0;
  const typing = thread.state === 'ready' && thread.visitorTyping;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [count, typing, thread.state, resolvedNote, thread.state === 'ready' && thread.status]);

  // An image that finishes loading can push the newest message out of view: keep it in view, as above. (`load` does not
  // bubble; a listener in the capture phase hears every image of the transcript.)
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const keepNewestInView = () => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    };
    el.addEventListener('load', keepNewestInView, true);
    return () => el.removeEventListener('load', keepNewestInView, true);
  }, [thread.state]);

  // Opened from the list: focus goes to the reply box on wide screens, to the heading on phones (where the list was
  // replaced, so the screen reader should hear what opened).
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || thread.state !== 'ready' || !props.focusOnOpen) return;
    focused.current = true;
    if (matchMedia('(max-width: 760px)').matches) heading.current?.focus({ preventScroll: true });
    else replyBox.current?.focus({ preventScroll: true });
  }, [thread.state]);

  function onScroll() {
    const el = scroller.current;
    if (!el) return;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    if (stick.current) setUnseen(0);
  }

  function jumpToNewest() {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
    stick.current = true;
    setUnseen(0);
  }

  function onType(value: string) {
    setDraft(value);
    setSendFailure(undefined);
    const t = Date.now();
    if (value.trim() && t - lastTyping.current >= TYPING_EVERY_MS) {
      lastTyping.current = t;
      // A lost typing signal only means the visitor does not see the dots: not worth telling the operator.
      void inboxApi.typing(botId, sessionId);
    }
  }

  async function send() {
    const text = draft.trim();
    if (!text || sending) return;
    if (text.length > MAX_REPLY) {
      setSendFailure({ status: 400, code: 'bad_request', message: `A reply can be at most ${MAX_REPLY} characters.` });
      return;
    }
    setSending(true);
    setSendFailure(undefined);
    const res = await inboxApi.reply(botId, sessionId, text);
    setSending(false);
    if (!res.ok) {
      setSendFailure(res);
      return;
    }
    setDraft('');
    lastTyping.current = 0;
    merge([{ id: res.value.id, author: 'operator', text, at: res.value.at }]);
    stick.current = true;
    setResolvedNote(false);
    setThread((prev) =>
      prev.state === 'ready' ? { ...prev, messages: ordered(), status: res.value.status || prev.status } : prev,
    );
    props.onChanged();
    pollNow();
  }

  function onReplyKey(event: KeyboardEvent) {
    // Enter sends; Shift+Enter is a new line; Enter while an input method composes a word belongs to it.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  async function resolve() {
    setResolving(true);
    setResolveFailure(undefined);
    const res = await inboxApi.resolve(botId, sessionId);
    setResolving(false);
    if (!res.ok) {
      setResolveFailure(res);
      return;
    }
    setThread((prev) => (prev.state === 'ready' ? { ...prev, status: res.value.status || 'bot' } : prev));
    setResolvedNote(true);
    props.announce('Resolved. The assistant answers this visitor again.');
    heading.current?.focus({ preventScroll: true });
    props.onChanged();
  }

  const status = thread.state === 'ready' ? thread.status : (props.summary?.status ?? '');
  const st = statusInfo(status);
  const visitor = visitorName(
    thread.state === 'ready' ? thread.visitorUser : (props.summary?.visitor_user ?? null),
    sessionId,
  );

  return (
    <div
      class="thread"
      onKeyDown={(e) => e.key === 'Escape' && matchMedia('(max-width: 760px)').matches && props.onBack()}
    >
      <header class="thread-header">
        <button type="button" class="btn btn-ghost btn-small thread-back" onClick={props.onBack}>
          <span aria-hidden="true">←</span> Back<span class="visually-hidden"> to the list</span>
        </button>
        <div class="thread-title">
          <h2 ref={heading} tabIndex={-1} data-testid="thread-title">
            {visitor}
          </h2>
          <p class="thread-subtitle">
            {status && <Badge tone={st.tone}>{st.label}</Badge>}
            {props.botName && <span>{props.botName}</span>}
            {props.summary?.escalated_at && isOpen(status) && (
              <span title={formatDateTime(props.summary.escalated_at)}>
                handed over {formatRelative(props.summary.escalated_at, now)}
              </span>
            )}
          </p>
        </div>
        {isOpen(status) && (
          <Button variant="secondary" busy={resolving} busyLabel="Resolving…" onClick={() => void resolve()}>
            <span aria-hidden="true">✓</span> Resolve
          </Button>
        )}
      </header>
      {resolveFailure && (
        <div class="thread-banner">
          <ErrorBox failure={resolveFailure} title="Not resolved." onRetry={() => void resolve()} />
        </div>
      )}
      {resolvedNote && !isOpen(status) && (
        <p class="thread-banner notice notice-success" data-testid="resolved-note">
          Resolved. The assistant answers this visitor again; the request has left the open list.
        </p>
      )}
      {thread.state === 'ready' && thread.stale && (
        <p class="stale-line thread-stale" role="status">
          <span class="stale-dot" aria-hidden="true" /> Not refreshed: {describeFailure(thread.stale)} Retrying…
        </p>
      )}

      <div class="thread-scroll" ref={scroller} onScroll={onScroll} tabIndex={0} aria-label="Transcript">
        {thread.state === 'loading' && <Loading label="Loading the conversation…" />}
        {thread.state === 'error' && (
          <div class="thread-error">
            {thread.failure.status === 404 ? (
              <p class="notice notice-warning" role="alert">
                This conversation does not exist, or it is not one of your workspace&rsquo;s agents.
              </p>
            ) : (
              <ErrorBox
                failure={thread.failure}
                title="The conversation cannot be read."
                onRetry={() => {
                  setThread({ state: 'loading' });
                  pollNow();
                }}
              />
            )}
          </div>
        )}
        {thread.state === 'ready' && <Transcript messages={thread.messages} botName={props.botName} />}
        {thread.state === 'ready' && thread.visitorTyping && (
          <p class="visitor-typing" data-testid="visitor-typing">
            <TypingDots /> Visitor is typing…
          </p>
        )}
      </div>
      {unseen > 0 && (
        <button type="button" class="new-below" onClick={jumpToNewest}>
          {unseen === 1 ? '1 new message' : `${unseen} new messages`} <span aria-hidden="true">↓</span>
        </button>
      )}

      {thread.state === 'ready' && (
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          {!isOpen(thread.status) && (
            <p class="composer-note" id="reply-note">
              The assistant is answering this visitor. A reply from you hands the conversation to you.
            </p>
          )}
          <label for="reply" class="visually-hidden">
            Reply to {visitor}
          </label>
          <div class="composer-row">
            <textarea
              id="reply"
              ref={replyBox}
              rows={2}
              value={draft}
              placeholder={`Reply to ${visitor}…`}
              aria-describedby={`reply-hint${!isOpen(thread.status) ? ' reply-note' : ''}`}
              aria-invalid={sendFailure ? true : undefined}
              onInput={(e) => onType((e.currentTarget as HTMLTextAreaElement).value)}
              onKeyDown={onReplyKey}
            />
            <Button type="submit" variant="primary" busy={sending} busyLabel="Sending…" disabled={!draft.trim()}>
              Send
            </Button>
          </div>
          <p class="composer-hint" id="reply-hint">
            Enter sends · Shift+Enter adds a line
            {draft.length > MAX_REPLY - 1000 && (
              <span class={draft.length > MAX_REPLY ? 'over' : ''}>
                {' '}
                · {draft.length} / {MAX_REPLY}
              </span>
            )}
          </p>
          {sendFailure && <ErrorBox failure={sendFailure} title="Not sent." />}
        </form>
      )}
    </div>
  );
}

function announcementOf(m: Message, botName?: string): string {
  if (m.author === 'event') {
    if (m.event?.kind === 'rating')
      return `The visitor rated an answer ${m.event.rating === 'up' ? 'helpful' : 'not helpful'}.`;
    if (m.event?.kind === 'contact') return 'The visitor left a contact.';
    return m.text;
  }
  if (m.attachment && m.author === 'visitor') return 'The visitor sent an image.';
  const who = authorLabel(m.author, botName);
  return who ? `${who}: ${m.text}` : m.text;
}

const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long' });
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

function dayLabel(ms: number): string {
  const d = new Date(ms);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (d.toDateString() === today.toDateString()) return 'Today';
  if (d.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return dayFormat.format(d);
}

/** The messages, with a line where the day changes. */
function Transcript(props: { messages: Message[]; botName?: string }) {
  const byId = new Map(props.messages.map((m) => [m.id, m]));
  const rows: ComponentChildren[] = [];
  let day = '';
  for (const m of props.messages) {
    const d = new Date(m.at).toDateString();
    if (d !== day) {
      day = d;
      rows.push(
        <li key={`day-${d}`} class="day-line" role="presentation">
          <span>{dayLabel(m.at)}</span>
        </li>,
      );
    }
    rows.push(<MessageRow key={m.id} m={m} byId={byId} botName={props.botName} />);
  }
  if (props.messages.length === 0) return <p class="muted small transcript-empty">No messages yet.</p>;
  return (
    <ol class="transcript" data-testid="transcript">
      {rows}
    </ol>
  );
}

function clip(text: string, max = 140): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function Stamp(props: { at: number }) {
  return (
    <time class="msg-time" dateTime={new Date(props.at).toISOString()} title={formatDateTime(props.at)}>
      {timeFormat.format(new Date(props.at))}
    </time>
  );
}

function MessageRow(props: { m: Message; byId: Map<string, Message>; botName?: string }) {
  const { m } = props;
  if (m.author === 'event') return <EventRow m={m} byId={props.byId} botName={props.botName} />;
  const who = authorLabel(m.author, props.botName);
  // Spec, Message: an unknown author is shown as its text line, not dropped.
  if (!who) {
    return (
      <li class="line-row" data-testid="line">
        <span class="line-text">
          <Linkified text={m.text} />
        </span>
        <Stamp at={m.at} />
      </li>
    );
  }
  return (
    <li class={`msg msg-${m.author}`} id={`msg-${m.id}`} data-testid={`msg-${m.author}`}>
      <div class="msg-head">
        <span class="msg-author">{who}</span>
        <Stamp at={m.at} />
      </div>
      <div class={m.attachment ? 'msg-bubble msg-bubble-image' : 'msg-bubble'}>
        {m.attachment && (
          <a
            class="msg-image"
            href={m.attachment.url}
            target="_blank"
            rel="noopener noreferrer"
            title="Open the image full size in a new tab"
          >
            <img
              src={m.attachment.url}
              alt={m.text ? `Image: ${m.text}` : `Image sent by the ${m.author === 'visitor' ? 'visitor' : who}`}
              loading="lazy"
              width={m.attachment.width}
              height={m.attachment.height}
            />
            <span class="visually-hidden"> (opens full size in a new tab)</span>
          </a>
        )}
        {m.text &&
          !m.attachment &&
          (m.author === 'visitor' ? <Linkified text={m.text} /> : <MarkdownText text={m.text} />)}
        {m.text && m.attachment && <p class="msg-caption">{m.text}</p>}
      </div>
    </li>
  );
}

function EventRow(props: { m: Message; byId: Map<string, Message>; botName?: string }) {
  const { m } = props;
  const ev = m.event;
  if (ev?.kind === 'rating' && (ev.rating === 'up' || ev.rating === 'down')) {
    const up = ev.rating === 'up';
    const rated = ev.ref ? props.byId.get(ev.ref) : undefined;
    return (
      <li
        class={`event event-rating ${up ? 'event-up' : 'event-down'}`}
        data-testid="event-rating"
        data-rating={ev.rating}
      >
        <span class="event-icon">{up ? <ThumbUpIcon /> : <ThumbDownIcon />}</span>
        <div class="event-body">
          <p class="event-title">
            The visitor rated {rated ? 'this answer' : 'an answer'} <strong>{up ? 'helpful' : 'not helpful'}</strong>
          </p>
          {rated ? (
            <a class="event-quote" href={`#msg-${rated.id}`}>
              “{clip(rated.text)}”
            </a>
          ) : (
            <p class="event-quote muted">An earlier answer (not on this page of the transcript).</p>
          )}
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  if (ev?.kind === 'contact') {
    const contact = ev.contact ?? '';
    const href = /^[^\s@]+@[^\s@]+$/.test(contact)
      ? `mailto:${contact}`
      : /^\+?[\d\s().-]{5,}$/.test(contact)
        ? `tel:${contact.replace(/[^\d+]/g, '')}`
        : undefined;
    return (
      <li class="event event-contact" data-testid="event-contact">
        <span class="event-icon">
          <ContactIcon />
        </span>
        <div class="event-body">
          <p class="event-title">The visitor left a contact</p>
          <dl class="contact-card">
            {ev.name && (
              <>
                <dt>Name</dt>
                <dd>{ev.name}</dd>
              </>
            )}
            <dt>Contact</dt>
            <dd>{href ? <a href={href}>{contact}</a> : contact || '—'}</dd>
            {ev.note && (
              <>
                <dt>Note</dt>
                <dd class="contact-note">{ev.note}</dd>
              </>
            )}
          </dl>
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  // An unknown kind (or a rating without a known value) is shown as its text line.
  return (
    <li class="line-row" data-testid="line">
      <span class="line-text">
        <Linkified text={m.text} />
      </span>
      <Stamp at={m.at} />
    </li>
  );
}

/** Line icons (24×24, stroked in the text colour); decorative: the words beside them say the same. */
function Icon(props: { d: string }) {
  return (
    <svg
      width="18"
      height="18"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={props.d} />
    </svg>
  );
}

const ThumbUpIcon = () => (
  <Icon d="M7 11v9H4v-9h3zm0 0l4-8a2 2 0 0 1 2 2v4h5.5a2 2 0 0 1 2 2.3l-1.2 7A2 2 0 0 1 17.3 20H7" />
);
const ThumbDownIcon = () => (
  <Icon d="M17 13V4h3v9h-3zm0 0l-4 8a2 2 0 0 1-2-2v-4H5.5a2 2 0 0 1-2-2.3l1.2-7A2 2 0 0 1 6.7 4H17" />
);
const ContactIcon = () => <Icon d="M4 5h16v14H4zM9 11a2 2 0 1 0 0-.01M6 16a3 3 0 0 1 6 0M14 9h4M14 13h4" />;

/** Desktop notifications and a tone for new requests, on this device (the browser asks for permission once). */
function AlertsToggle() {
  const [on, setOn] = useState(alertsOn());
  const [refused, setRefused] = useState(false);
  return (
    <div class="alerts-toggle">
      <Button
        variant="secondary"
        aria-pressed={on}
        onClick={() =>
          void switchAlerts(!on).then((done) => {
            setRefused(!done);
            if (done) setOn(!on);
          })
        }
      >
        {on ? 'Alerts on for this device' : 'Alert me of new requests'}
      </Button>
      {refused && (
        <p class="muted small" role="status">
          The browser refused notifications for this site; allow them in its site settings.
        </p>
      )}
    </div>
  );
}
