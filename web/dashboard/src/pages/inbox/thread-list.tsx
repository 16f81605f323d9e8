import type { Ref } from 'preact';
import type { ThreadSummary } from '../../api/inbox';
import { formatDateTime, formatRelative } from '../../ui/format';
import { Badge } from '../../ui/status';
import { PersonIcon } from '../../../../shared/icons';
import { HandoverBadges } from './handover-badges';
import { type View, addressOf, assigneeLabel, preview, statusInfo, threadKey, visitorName } from './model';
import { TypingDots } from './typing-dots';

/**
 * The inbox's conversations, newest first: each a link to its conversation (kept in the address, so it opens in a
 * new tab too), with the visitor, when they last wrote, status, why it came to the team, the agent, how long it has
 * waited, who handles it, and what was said last. Arrow keys, Home and End move between them.
 */
export function ThreadList(props: {
  threads: ThreadSummary[];
  view: View;
  selectedKey: string;
  me: string;
  now: number;
  listRef: Ref<HTMLUListElement>;
  onSelect: (thread: ThreadSummary) => void;
}) {
  return (
    <ul class="thread-list" ref={props.listRef} onKeyDown={listKeys} data-testid="thread-list">
      {props.threads.map((t) => {
        const key = threadKey(t.bot_id, t.session_id);
        return (
          <li key={key}>
            <ThreadRow
              thread={t}
              href={addressOf({ ...props.view, bot: t.bot_id, session: t.session_id })}
              threadKey={key}
              selected={key === props.selectedKey}
              me={props.me}
              now={props.now}
              onSelect={() => props.onSelect(t)}
            />
          </li>
        );
      })}
    </ul>
  );
}

/** Arrow keys move between the list's entries. */
function listKeys(event: KeyboardEvent) {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp' && event.key !== 'Home' && event.key !== 'End') return;
  const list = event.currentTarget as HTMLElement;
  const links = [...list.querySelectorAll<HTMLElement>('a.thread-link')];
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

function ThreadRow(props: {
  thread: ThreadSummary;
  href: string;
  threadKey: string;
  selected: boolean;
  me: string;
  now: number;
  onSelect: () => void;
}) {
  const { thread: t, now } = props;
  const st = statusInfo(t.status);
  return (
    <a
      class={`thread-link${props.selected ? ' selected' : ''}${t.status === 'waiting' ? ' thread-waiting' : ''}`}
      href={props.href}
      aria-current={props.selected ? 'true' : undefined}
      data-key={props.threadKey}
      data-testid="thread"
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        props.onSelect();
      }}
    >
      <span class="thread-top">
        <span class="thread-visitor">{visitorName(t.visitor_name || t.visitor_user, t.session_id)}</span>
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
          <span class="thread-wait">waiting {formatRelative(t.escalated_at, now).replace(' ago', '')}</span>
        )}
        {t.assignee && (
          <span class="thread-assignee" data-testid="thread-assignee">
            <PersonIcon size={14} />
            <span class="visually-hidden">Assigned to </span>
            {assigneeLabel(t.assignee, props.me)}
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
  );
}
