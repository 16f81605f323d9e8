import { useState } from 'preact/hooks';
import { type Member, type Revoked, type RotatedKey, teamApi } from '../../api/team';
import { roleLabel } from '../../layout';
import { useSession } from '../../session';
import { Page, Panel } from '../../ui/page';
import { Loaded, useResource } from '../../ui/resource';
import { BuilderKeys } from './builder-keys';
import { Invitations } from './invitations';
import { type Invited, InviteForm, InviteResult } from './invite-form';
import { MemberRow } from './members';
import { ROLES, ROLE_HELP, canChangeRole, canInviteAdmins, canRemove, plural, revokedText } from './model';
import { ConfirmRemove } from './remove-member';
import { SeenKeys } from './seen-keys';
import './team.css';

/**
 * `/team`: the workspace's people. Members with their roles; an invitation by e-mail with a role, whose link is shown
 * to copy (and e-mailed when the platform can send mail); pending invitations to revoke; the owner changes roles; a
 * member is removed after a confirmation; the keys people who left saw, to rotate; the workspace's builder keys. What
 * the signed-in role may not do is not drawn (model.ts), and a 403 the API still gives is shown in its own words.
 */
export function TeamPage() {
  const session = useSession();
  const myRole = session.role;
  const team = useResource(() => teamApi.list(), []);
  const keys = useResource(() => teamApi.builderKeys(), []);
  const seen = useResource(() => teamApi.seenKeys(), []);
  const [rotated, setRotated] = useState<RotatedKey[] | undefined>();
  const [invited, setInvited] = useState<Invited | undefined>();
  const [removing, setRemoving] = useState<Member | undefined>();
  const [message, setMessage] = useState('');

  /**
   * The invitations and builder keys a removed or demoted person issued are gone: read both again, and the keys they
   * were shown (to rotate; or rotated at once, whose new values are shown once).
   */
  const refreshIssued = (revoked?: Revoked) => {
    team.reload();
    keys.reload();
    seen.reload();
    if (revoked?.rotated_keys.length) setRotated(revoked.rotated_keys);
    if (revoked?.keys_seen.length || revoked?.rotated_keys.length) {
      document.getElementById('seen-keys')?.scrollIntoView({ block: 'start' });
    }
  };

  return (
    <Page title="Team" description="Who works in this workspace, and what each of them may do." wide>
      <div class="visually-hidden" aria-live="polite">
        {message}
      </div>
      <InviteForm
        canInviteAdmins={canInviteAdmins(myRole)}
        onInvited={(inv) => {
          setInvited(inv);
          setMessage(`Invitation for ${inv.email} created.`);
          void team.reload();
        }}
      />
      {invited && <InviteResult invited={invited} onDone={() => setInvited(undefined)} />}

      <Loaded resource={team.resource} retry={team.retry} label="Loading the team…">
        {(data) => (
          <>
            <Panel title={`Members (${data.members.length})`} id="members">
              <ul class="member-list" data-testid="members">
                {data.members.map((m) => (
                  <MemberRow
                    key={m.id}
                    member={m}
                    canChangeRole={canChangeRole(myRole, m)}
                    canRemove={canRemove(myRole, m)}
                    onChanged={(updated, revoked) => {
                      team.set((d) => ({
                        ...d,
                        members: d.members.map((x) => (x.id === updated.id ? { ...x, ...updated } : x)),
                      }));
                      setMessage(
                        `${updated.email} is now ${roleLabel(updated.role).toLowerCase()}.${revokedText(revoked)}`,
                      );
                      // An admin made an operator loses the keys and invitations they issued.
                      if (revoked) refreshIssued(revoked);
                    }}
                    onRemove={() => setRemoving(m)}
                  />
                ))}
              </ul>
            </Panel>
            <Invitations
              invitations={data.invitations}
              onRevoked={(inv) => {
                team.set((d) => ({ ...d, invitations: d.invitations.filter((i) => i.id !== inv.id) }));
                setMessage(`Invitation for ${inv.email} revoked.`);
              }}
            />
          </>
        )}
      </Loaded>

      <SeenKeys
        seen={seen}
        owner={myRole === 'owner'}
        rotated={rotated}
        onRotated={(r) => {
          setRotated(r);
          if (r) setMessage(r.length ? `${plural(r.length, 'key')} rotated.` : 'Nothing was left to rotate.');
        }}
        onSetting={(rotate) => seen.set((d) => ({ ...d, rotate_keys_on_departure: rotate }))}
      />

      <BuilderKeys
        keys={keys}
        owner={myRole === 'owner'}
        onRevoked={(k) => {
          keys.set((d) => ({ builder_keys: d.builder_keys.filter((x) => x.id !== k.id) }));
          setMessage(`Builder key ${k.fingerprint} revoked.`);
        }}
      />

      <Panel title="Roles" id="roles">
        <dl class="role-help">
          {ROLES.map((r) => (
            <div key={r}>
              <dt>{roleLabel(r)}</dt>
              <dd>{ROLE_HELP[r]}</dd>
            </div>
          ))}
        </dl>
      </Panel>

      {removing && (
        <ConfirmRemove
          member={removing}
          onClose={() => setRemoving(undefined)}
          onRemoved={(revoked) => {
            const gone = removing;
            setRemoving(undefined);
            team.set((d) => ({ ...d, members: d.members.filter((x) => x.id !== gone.id) }));
            setMessage(`${gone.email} was removed from the workspace.${revokedText(revoked)}`);
            refreshIssued(revoked);
          }}
        />
      )}
    </Page>
  );
}
