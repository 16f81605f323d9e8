import { useState } from 'preact/hooks';
import { type Notification, notificationsApi } from '../api/notifications';
import { Link } from '../router';
import { useSession } from '../session';
import { Button } from '../ui/buttons';
import { Segmented } from '../ui/fields';
import { Time } from '../ui/format';
import { Empty, Page } from '../ui/page';
import { Loaded, useAction, useResource } from '../ui/resource';
import { Badge, ErrorBox } from '../ui/status';
import { usePolling } from '../use-polling';
import './notifications.css';

/**
 * `/notifications`: what the workspace was told (paused triggers, approvals waiting, contacts visitors left, webhook
 * deliveries given up), newest first, unread ones marked. Each links to where it can be dealt with, when its data
 * says where; opening the link marks it read. Read again every 30 s while the page is open.
 */

const REFRESH_MS = 30_000;

const KINDS: Record<string, { label: string; tone: 'warning' | 'info' | 'success' | 'neutral' }> = {
  trigger_paused: { label: 'Trigger paused', tone: 'warning' },
  approval_requested: { label: 'Approval needed', tone: 'info' },
  contact_left: { label: 'Contact left', tone: 'success' },
  handoff_requested: { label: 'Asked for a person', tone: 'warning' },
  delivery_failed: { label: 'Webhook failed', tone: 'warning' },
};

/** Where a notification can be acted on, from what its data holds. */
function targetOf(n: Notification): { href: string; label: string } | undefined {
  const bot = n.bot_id ?? (typeof n.data?.bot_id === 'string' ? n.data.bot_id : undefined);
  if (!bot) return undefined;
  const b = encodeURIComponent(bot);
  if (n.kind === 'contact_left' && typeof n.data?.session_id === 'string')
    return {
      href: `/inbox?status=all&bot=${b}&session=${encodeURIComponent(n.data.session_id)}`,
      label: 'Open the conversation',
    };
  if (n.kind === 'handoff_requested' && typeof n.data?.session_id === 'string')
    return {
      href: `/inbox?bot=${b}&session=${encodeURIComponent(n.data.session_id)}`,
      label: 'Open the conversation',
    };
  if (n.kind === 'approval_requested') return { href: `/agents/${b}/actions`, label: 'Review the approval' };
  if (n.kind === 'trigger_paused') return { href: `/agents/${b}/triggers`, label: 'Open the triggers' };
  if (n.kind === 'delivery_failed')
    return { href: `/agents/${b}/settings`, label: 'See what failed and send it again' };
  return { href: `/agents/${b}`, label: 'Open the agent' };
}

export function NotificationsPage() {
  const session = useSession();
  const list = useResource(() => notificationsApi.list(), []);
  const marking = useAction();
  const [onlyUnread, setOnlyUnread] = useState(false);

  // The first read is useResource's; this keeps the list fresh while the page is seen.
  usePolling(
    async () => {
      list.reload();
      return 'ok';
    },
    { everyMs: REFRESH_MS, onlyWhenVisible: true, waitFirst: true },
    [],
  );

  /** Marks read here at once (the answer confirms it); on failure the page reads the truth again. */
  async function markRead(ids?: string[]) {
    const at = Date.now();
    const res = await marking.run(() => notificationsApi.markRead(ids), ids ? ids.join(',') : 'all');
    if (res.ok) {
      list.set((data) => {
        const notifications = data.notifications.map((n) =>
          !ids || ids.includes(n.id) ? { ...n, read_at: n.read_at ?? at } : n,
        );
        return { ...data, notifications, unread: notifications.filter((n) => !n.read_at).length };
      });
    }
    void list.reload();
    session.refreshUnread();
  }

  const unread = list.data ? list.data.notifications.filter((n) => !n.read_at).length : 0;

  return (
    <Page
      title={unread > 0 ? `Notifications (${unread})` : 'Notifications'}
      heading="Notifications"
      description="Paused triggers, approvals waiting for you, contacts visitors left, and webhook events that failed."
      actions={
        unread > 0 ? (
          <Button busy={marking.busy === 'all'} busyLabel="Marking…" onClick={() => void markRead()}>
            Mark all as read
          </Button>
        ) : undefined
      }
    >
      <div class="ops-toolbar">
        <Segmented
          legend="Show"
          legendHidden
          name="notif-show"
          value={onlyUnread}
          options={[
            { value: false, label: 'All' },
            { value: true, label: `Unread${unread > 0 ? ` (${unread})` : ''}` },
          ]}
          onChange={setOnlyUnread}
        />
        {list.refreshing && <span class="muted small">Refreshing…</span>}
      </div>
      {marking.failure && <ErrorBox failure={marking.failure} title="Not marked as read." />}
      <Loaded resource={list.resource} retry={list.retry} label="Loading notifications…">
        {(data) => {
          const shown = onlyUnread ? data.notifications.filter((n) => !n.read_at) : data.notifications;
          if (shown.length === 0)
            return (
              <Empty title={onlyUnread ? 'Nothing unread' : 'No notifications yet'}>
                <p class="muted">
                  You are told here when a trigger is paused after failures, when an action waits for approval, when a
                  visitor leaves a contact, and when your webhook address does not accept an event.
                </p>
              </Empty>
            );
          return (
            <ul class="notification-list" data-testid="notifications">
              {shown.map((n) => {
                const kind = KINDS[n.kind];
                const target = targetOf(n);
                const isUnread = !n.read_at;
                return (
                  <li
                    key={n.id}
                    class={`notification${isUnread ? ' notification-unread' : ''}`}
                    data-testid="notification"
                  >
                    <span class="unread-dot" aria-hidden="true" />
                    <div class="notification-body">
                      <p class="notification-top">
                        {kind && <Badge tone={kind.tone}>{kind.label}</Badge>}
                        <strong class="notification-title">
                          {isUnread && <span class="visually-hidden">Unread: </span>}
                          {n.title}
                        </strong>
                      </p>
                      {n.body && <p class="notification-text">{n.body}</p>}
                      <p class="notification-foot">
                        <span class="muted small">
                          <Time ms={n.created_at} relative />
                        </span>
                        {target && (
                          <Link
                            href={target.href}
                            class="notification-link"
                            onNavigate={() => {
                              if (isUnread) void notificationsApi.markRead([n.id]).then(() => session.refreshUnread());
                            }}
                          >
                            {target.label}
                          </Link>
                        )}
                      </p>
                    </div>
                    {isUnread && (
                      <Button
                        small
                        variant="ghost"
                        class="notification-mark"
                        busy={marking.busy === n.id}
                        onClick={() => void markRead([n.id])}
                        aria-label={`Mark “${n.title}” as read`}
                      >
                        Mark as read
                      </Button>
                    )}
                  </li>
                );
              })}
            </ul>
          );
        }}
      </Loaded>
    </Page>
  );
}
