import type { Ref } from 'preact';
import type { Teammate, ThreadSummary } from '../../api/inbox';
import { Button } from '../../ui/buttons';
import { formatDateTime, formatRelative } from '../../ui/format';
import { Badge } from '../../ui/status';
import { AssigneeControl } from './assignee';
import { HandoverBadges } from './handover-badges';
import { isOpen, statusInfo } from './model';

/**
 * The open conversation's head: a way back to the list (phones), who the visitor is, the status and why it came to
 * the team, the agent, how long ago it was handed over, who handles it, and Resolve while it is open.
 */
export function ThreadHeader(props: {
  heading: Ref<HTMLHeadingElement>;
  visitor: string;
  status: string;
  why?: Pick<ThreadSummary, 'escalation_reason' | 'after_hours'>;
  botName?: string;
  summary?: ThreadSummary;
  now: number;
  /** Who handles it, once the transcript is read. */
  assignment?: { botId: string; sessionId: string; assignee: Teammate | null; me: string };
  onAssigned: (assignee: Teammate | null) => void;
  resolving: boolean;
  onResolve: () => void;
  onBack: () => void;
}) {
  const { status, summary } = props;
  const st = statusInfo(status);
  return (
    <header class="thread-header">
      <button type="button" class="btn btn-ghost btn-small thread-back" onClick={props.onBack}>
        <span aria-hidden="true">←</span> Back<span class="visually-hidden"> to the list</span>
      </button>
      <div class="thread-title">
        <h2 ref={props.heading} tabIndex={-1} data-testid="thread-title">
          {props.visitor}
        </h2>
        <p class="thread-subtitle">
          {status && <Badge tone={st.tone}>{st.label}</Badge>}
          {props.why && <HandoverBadges thread={props.why} detailed />}
          {props.botName && <span>{props.botName}</span>}
          {summary?.escalated_at && isOpen(status) && (
            <span title={formatDateTime(summary.escalated_at)}>
              handed over {formatRelative(summary.escalated_at, props.now)}
            </span>
          )}
        </p>
        {props.assignment && <AssigneeControl {...props.assignment} onAssigned={props.onAssigned} />}
      </div>
      {isOpen(status) && (
        <Button variant="secondary" busy={props.resolving} busyLabel="Resolving…" onClick={props.onResolve}>
          <span aria-hidden="true">✓</span> Resolve
        </Button>
      )}
    </header>
  );
}
