import { type Invitation, teamApi } from '../../api/team';
import { roleLabel } from '../../layout';
import { Button } from '../../ui/buttons';
import { Time, formatDate } from '../../ui/format';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';
import { Breakable } from './members';

/** Invitations whose links were not used yet, each with Revoke (its link stops working). */
export function Invitations(props: { invitations: Invitation[]; onRevoked: (inv: Invitation) => void }) {
  return (
    <Panel
      title={`Pending invitations (${props.invitations.length})`}
      id="invitations"
      description="Links not used yet. Revoke one and its link stops working."
    >
      {props.invitations.length === 0 ? (
        <p class="muted">No pending invitations.</p>
      ) : (
        <ul class="member-list" data-testid="invitations">
          {props.invitations.map((inv) => (
            <InvitationRow key={inv.id} invitation={inv} onRevoked={() => props.onRevoked(inv)} />
          ))}
        </ul>
      )}
    </Panel>
  );
}

function InvitationRow(props: { invitation: Invitation; onRevoked: () => void }) {
  const inv = props.invitation;
  const action = useAction();
  async function revoke() {
    const res = await action.run(() => teamApi.revoke(inv.id));
    if (res.ok || res.status === 404) props.onRevoked();
  }
  return (
    <li class="member" data-testid="invitation">
      <span class="avatar member-avatar avatar-pending" aria-hidden="true">
        @
      </span>
      <div class="member-who">
        <span class="member-name">
          <Breakable text={inv.email} />
        </span>
        <span class="muted small">
          Invited <Time ms={inv.created_at} relative />
          {inv.invited_by && <> by {inv.invited_by}</>} · expires {formatDate(inv.expires_at)}
        </span>
      </div>
      <div class="member-role">
        <Badge>{roleLabel(inv.role)}</Badge>
      </div>
      <div class="member-actions">
        <Button
          small
          variant="ghost"
          busy={action.busy !== false}
          busyLabel="Revoking…"
          onClick={() => void revoke()}
          aria-label={`Revoke the invitation for ${inv.email}`}
        >
          Revoke
        </Button>
      </div>
      {action.failure && action.failure.status !== 404 && (
        <div class="member-error">
          <ErrorBox failure={action.failure} title="Not revoked." />
        </div>
      )}
    </li>
  );
}
