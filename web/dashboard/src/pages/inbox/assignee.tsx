import type { Teammate } from '../../api/inbox';
import { inboxApi } from '../../api/inbox';
import { Button } from '../../ui/buttons';
import { useAction } from '../../ui/resource';
import { describeFailure } from '../../ui/status';
import { PersonIcon } from '../../../../shared/icons';
import { assigneeLabel } from './model';
import './assignee.css';

/**
 * Who handles the open conversation, under its title: "Assigned to Ana" or "Unassigned", with the one change an
 * operator usually wants — take it, or give it back. A reply from the dashboard takes an unassigned conversation by
 * itself (the server does), so this is for taking one before answering, or handing it back.
 */
export function AssigneeControl(props: {
  botId: string;
  sessionId: string;
  assignee: Teammate | null;
  me: string;
  onAssigned: (assignee: Teammate | null) => void;
}) {
  const action = useAction();
  const mine = props.assignee?.id === props.me;
  const label = assigneeLabel(props.assignee, props.me);

  async function assign(userId: string | null) {
    const res = await action.run(() => inboxApi.assign(props.botId, props.sessionId, userId));
    if (res.ok) props.onAssigned(res.value.assignee);
  }

  return (
    <div class="assignee" data-testid="assignee">
      <PersonIcon size={14} />
      <span class="assignee-name">{label ? <>Assigned to {label === 'You' ? 'you' : label}</> : 'Unassigned'}</span>
      {mine ? (
        <Button
          small
          variant="ghost"
          busy={Boolean(action.busy)}
          busyLabel="Unassigning…"
          onClick={() => void assign(null)}
        >
          Unassign
        </Button>
      ) : (
        <Button
          small
          variant="ghost"
          busy={Boolean(action.busy)}
          busyLabel="Assigning…"
          onClick={() => void assign(props.me)}
        >
          Assign to me
        </Button>
      )}
      {action.failure && (
        <span class="assignee-error" role="alert">
          Not changed: {describeFailure(action.failure)}
        </span>
      )}
    </div>
  );
}

/** Another person of the team is typing a reply to this visitor: said above the composer, before a second answer. */
export function ReplyingLine(props: { replying: Teammate | null }) {
  return (
    <p class="team-replying" role="status" data-testid="team-replying">
      {props.replying ? <>{props.replying.name} is replying…</> : null}
    </p>
  );
}
