import { type InvitedRole, type Member, type Revoked, teamApi } from '../../api/team';
import { roleLabel } from '../../layout';
import { Button } from '../../ui/buttons';
import { formatDate } from '../../ui/format';
import { useAction } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';
import { revokedOf } from './model';

/** An address that may wrap after its `@` on a narrow screen, rather than anywhere. */
export function Breakable(props: { text: string }) {
  const at = props.text.indexOf('@');
  if (at < 0) return <span>{props.text}</span>;
  return (
    <span>
      {props.text.slice(0, at + 1)}
      <wbr />
      {props.text.slice(at + 1)}
    </span>
  );
}

/** A member: who, since when, their role (a choice for the owner), and Remove where the signed-in role may. */
export function MemberRow(props: {
  member: Member;
  canChangeRole: boolean;
  canRemove: boolean;
  onChanged: (m: Member, revoked?: Revoked) => void;
  onRemove: () => void;
}) {
  const m = props.member;
  const action = useAction();
  const display = m.name?.trim() || m.email;
  const selectId = `role-${m.id}`;

  async function change(role: InvitedRole) {
    if (role === m.role) return;
    const res = await action.run(() => teamApi.setRole(m.id, role));
    if (res.ok) {
      const { revoked_builder_keys, revoked_invitations, keys_seen, rotated_keys, ...member } = res.value;
      props.onChanged({ ...m, ...member, role: member.role ?? role }, revokedOf(res.value));
    }
  }

  return (
    <li class="member" data-testid="member">
      <span class="avatar member-avatar" aria-hidden="true">
        {display.charAt(0).toUpperCase()}
      </span>
      <div class="member-who">
        <span class="member-name">
          <Breakable text={display} />
          {m.you && <Badge tone="info">You</Badge>}
        </span>
        {m.name && (
          <span class="muted small member-email">
            <Breakable text={m.email} />
          </span>
        )}
        <span class="muted small">Joined {formatDate(m.created_at)}</span>
      </div>
      <div class="member-role">
        {props.canChangeRole ? (
          <>
            <label for={selectId} class="visually-hidden">
              Role of {display}
            </label>
            <select
              id={selectId}
              value={m.role}
              disabled={action.busy !== false}
              onChange={(e) => void change((e.currentTarget as HTMLSelectElement).value as InvitedRole)}
            >
              <option value="admin">Admin</option>
              <option value="operator">Operator</option>
            </select>
          </>
        ) : (
          <Badge tone={m.role === 'owner' ? 'info' : 'neutral'}>{roleLabel(m.role)}</Badge>
        )}
      </div>
      <div class="member-actions">
        {props.canRemove && (
          <Button small variant="ghost" class="danger-text" onClick={props.onRemove} aria-label={`Remove ${display}`}>
            Remove
          </Button>
        )}
      </div>
      {action.failure && (
        <div class="member-error">
          <ErrorBox failure={action.failure} title="Role not changed." />
        </div>
      )}
    </li>
  );
}
