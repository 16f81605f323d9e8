import { useEffect, useRef, useState } from 'preact/hooks';
import type { Failure } from '../../api/client';
import { type ThreadSummary, inboxApi } from '../../api/inbox';
import { navigate, usePlace } from '../../router';
import { useSession } from '../../session';
import { Button } from '../../ui/buttons';
import { Segmented } from '../../ui/fields';
import { formatDateTime, formatRelative } from '../../ui/format';
import { Page } from '../../ui/page';
import { Badge, ErrorBox, Loading, describeFailure } from '../../ui/status';
import { usePolling } from '../../use-polling';
import './inbox.css';
import { PersonIcon } from '../../../../shared/icons';
import { AlertsToggle } from './alerts-toggle';
import { HandoverBadges } from './handover-badges';
import {
  LIST_POLL_MS,
  MAX_BACKOFF_MS,
  MAX_PAGE,
  PAGE_STEP,
  type View,
  addressOf,
  assigneeLabel,
  preview,
  statusInfo,
  threadKey,
  viewFrom,
  visitorName,
} from './model';
import { ThreadView, TypingDots } from './thread';
import { useNow } from './use-now';

/**
 * `/inbox`: the operator's inbox. Requests handed to a person (or, toggled, every recent conversation) refresh every
 * few seconds in place; one opens beside the list (under it on phones) with its transcript, which polls with the
 * API's cursor for new messages and events, a reply box that tells the visitor the operator is typing, and Resolve.
 * The address holds the view (`?bot=&session=`, `&status=all`, `&agent=`), so a reload or a shared link opens the
 * same conversation. New messages and requests are announced politely to screen readers.
 */

const EMPTY = {
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
      const res = await inboxApi.threads({
        status: view.status === 'all' ? 'all' : 'open',
        ...(view.status === 'mine' ? { assignee: 'me' as const } : {}),
        botId: view.agent || undefined,
        limit,
      });
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
            `New request from ${visitorName(arrivals[0].visitor_name || arrivals[0].visitor_user, arrivals[0].session_id)}, ${arrivals[0].bot_name}.`,
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
              {view.status === 'open'
                ? 'Open requests'
                : view.status === 'mine'
                  ? 'Assigned to you'
                  : 'Recent conversations'}
              {list.state === 'ready' && <span class="count-pill">{list.threads.length}</span>}
            </h2>
            <div class="inbox-filters">
              <Segmented
                class="inbox-show"
                legend="Show"
                legendHidden
                name="inbox-status"
                value={view.status}
                options={[
                  { value: 'open', label: 'Open' },
                  { value: 'mine', label: 'Mine' },
                  { value: 'all', label: 'All recent' },
                ]}
                onChange={(status) => go({ status }, true)}
              />
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
              <p class="empty-title">{EMPTY[view.status].title}</p>
              <p class="muted small">{EMPTY[view.status].hint}</p>
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
                        <span class="thread-visitor">
                          {visitorName(t.visitor_name || t.visitor_user, t.session_id)}
                        </span>
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
                        <HandoverBadges thread={t} />
                        <span class="thread-agent">{t.bot_name}</span>
                        {t.status === 'waiting' && t.escalated_at && (
                          <span class="thread-wait">
                            waiting {formatRelative(t.escalated_at, now).replace(' ago', '')}
                          </span>
                        )}
                        {t.assignee && (
                          <span class="thread-assignee" data-testid="thread-assignee">
                            <PersonIcon size={14} />
                            <span class="visually-hidden">Assigned to </span>
                            {assigneeLabel(t.assignee, session.me.user.id)}
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
