import type { ThreadSummary } from '../../api/inbox';
import { formatDateTime } from '../../ui/format';
import { Badge } from '../../ui/status';

/**
 * Why a conversation came to the team, beside its status: the agent could not answer (`escalation_reason`
 * `unanswered`), and it came in outside the business hours (`after_hours`), with when the team is back — the
 * visitor was told that time and asked for a contact. Nothing for a visitor who simply asked, within the hours.
 */
export function HandoverBadges(props: {
  thread: Pick<ThreadSummary, 'escalation_reason' | 'after_hours'>;
  /** The open thread's header: when the team is back, written out; the list keeps it in the badge's title. */
  detailed?: boolean;
}) {
  const { escalation_reason: reason, after_hours: afterHours } = props.thread;
  const backAt = afterHours?.back_at ?? null;
  const back = backAt === null ? undefined : `team back ${backLabel(backAt)}`;
  return (
    <>
      {reason === 'unanswered' && (
        <span data-testid="badge-unanswered" title="The agent could not answer from its knowledge and handed over">
          <Badge tone="info">Agent couldn&rsquo;t answer</Badge>
        </span>
      )}
      {afterHours && (
        <span
          class="after-hours"
          data-testid="badge-after-hours"
          title={backAt === null ? undefined : `The visitor was told the team is back ${formatDateTime(backAt)}`}
        >
          <Badge tone="neutral">Came in after hours</Badge>
          {back && (props.detailed ? <span> {back}</span> : <span class="visually-hidden">, {back}</span>)}
        </span>
      )}
    </>
  );
}

const weekdayTime = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
const dateTime = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
});

/** "Tue 09:00" within the week ahead, "Tue, 14 Jul, 09:00" further; in the operator's zone and locale. */
function backLabel(ms: number): string {
  const days = Math.abs(ms - Date.now()) / 86_400_000;
  return (days < 6 ? weekdayTime : dateTime).format(ms);
}
