import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ThreadSummary } from '../../api/inbox';
import { inboxApi } from '../../api/inbox';
import { navigate, usePlace } from '../../router';
import { useSession } from '../../session';
import { Button } from '../../ui/buttons';
import { Segmented } from '../../ui/fields';
import { Page } from '../../ui/page';
import { ErrorBox, Loading, describeFailure } from '../../ui/status';
import { useNow } from '../../use-now';
import './inbox.css';
import { AlertsToggle } from './alerts-toggle';
import { EMPTY_LIST, LIST_TITLE, RELATIVE_TIMES_MS, type View, addressOf, threadKey, viewFrom } from './model';
import { ThreadView } from './thread';
import { ThreadList } from './thread-list';
import { type ListState, useInboxList } from './use-inbox-list';

/**
 * `/inbox`: the operator's inbox. Requests handed to a person (or, toggled, every recent conversation) refresh every
 * few seconds in place; one opens beside the list (under it on phones) with its transcript, which polls with the
 * API's cursor for new messages and events, a reply box that tells the visitor the operator is typing, and Resolve.
 * The address holds the view (`?bot=&session=`, `&status=all`, `&agent=`), so a reload or a shared link opens the
 * same conversation. New messages and requests are announced politely to screen readers.
 */
export function InboxPage() {
  const place = usePlace();
  const view = viewFrom(place.search);
  const selectedKey = view.bot && view.session ? threadKey(view.bot, view.session) : '';

  const [bots, setBots] = useState<{ id: string; name: string }[]>([]);
  const [announcement, setAnnouncement] = useState('');
  /** The open conversation was pushed over the bare list in this page: Back is then history's back. */
  const overList = useRef(false);
  /** The open conversation was chosen here (not opened from the address): focus follows it. */
  const chosen = useRef(false);
  /** The list entry to give focus back to when a phone returns from a conversation. */
  const returnFocus = useRef('');
  const listRef = useRef<HTMLUListElement>(null);
  const now = useNow(RELATIVE_TIMES_MS);
  const session = useSession();

  const announce = (text: string) => {
    // The same words twice in a row would not be read again: clear, then set.
    setAnnouncement('');
    setTimeout(() => setAnnouncement(text), 50);
  };
  const { list, refresh: refreshList, showMore } = useInboxList(view, announce);

  useEffect(() => {
    void inboxApi.bots().then((res) => {
      if (res.ok) setBots(res.value.bots.map((b) => ({ id: b.id, name: b.name })));
    });
  }, []);

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
          <ListHeader view={view} list={list} bots={bots} onView={(next) => go(next, true)} />
          <ListBody list={list} view={view} onRetry={refreshList}>
            {(shown) => (
              <ThreadList
                threads={shown}
                view={view}
                selectedKey={selectedKey}
                me={session.me.user.id}
                now={now}
                listRef={listRef}
                onSelect={select}
              />
            )}
          </ListBody>
          {list.state === 'ready' && list.more && (
            <div class="inbox-more">
              <Button small onClick={showMore}>
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

/** The list's heading with its count, and what it shows: open, mine or all recent, of one agent or all. */
function ListHeader(props: {
  view: View;
  list: ListState;
  bots: { id: string; name: string }[];
  onView: (next: Partial<View>) => void;
}) {
  const { view, list, bots } = props;
  return (
    <div class="inbox-list-header">
      <h2 id="inbox-list-title" class="inbox-list-title">
        {LIST_TITLE[view.status]}
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
          onChange={(status) => props.onView({ status })}
        />
        {bots.length > 1 && (
          <div class="inbox-agent-filter">
            <label for="inbox-agent" class="visually-hidden">
              Agent
            </label>
            <select
              id="inbox-agent"
              value={view.agent}
              onChange={(e) => props.onView({ agent: (e.currentTarget as HTMLSelectElement).value })}
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
  );
}

/** The list's states: loading, failed (with a retry), shown but not refreshed, empty for this view, or the rows. */
function ListBody(props: {
  list: ListState;
  view: View;
  onRetry: () => void;
  children: (threads: ThreadSummary[]) => ComponentChildren;
}) {
  const { list, view } = props;
  if (list.state === 'loading') return <Loading label="Loading conversations…" />;
  if (list.state === 'error') {
    return (
      <div class="inbox-list-error">
        <ErrorBox failure={list.failure} onRetry={props.onRetry} title="The inbox cannot be read." />
      </div>
    );
  }
  return (
    <>
      {list.stale && (
        <p class="stale-line" role="status">
          <span class="stale-dot" aria-hidden="true" /> Not refreshed: {describeFailure(list.stale)} Retrying…
        </p>
      )}
      {list.threads.length === 0 ? (
        <div class="inbox-empty">
          <p class="empty-title">{EMPTY_LIST[view.status].title}</p>
          <p class="muted small">{EMPTY_LIST[view.status].hint}</p>
        </div>
      ) : (
        props.children(list.threads)
      )}
    </>
  );
}
