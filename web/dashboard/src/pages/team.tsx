import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Invitation, type Member, type Revoked, type RotatedKey, teamApi } from '../api/team';
import { roleLabel } from '../layout';
import { useSession } from '../session';
import { Button, CopyButton } from '../ui/buttons';
import { Field, valueOf } from '../ui/fields';
import { Time, formatDate } from '../ui/format';
import { Page, Panel } from '../ui/page';
import { Loaded, useAction, useResource } from '../ui/resource';
import { Badge, ErrorBox } from '../ui/status';
import { BuilderKeys } from './team-builder-keys';
import { SeenKeys } from './team-seen-keys';
import './team.css';

/**
 * `/team`: the workspace's people. Members with their roles; an invitation by e-mail with a role, whose link is shown
 * to copy (and e-mailed when the platform can send mail); pending invitations to revoke; the owner changes roles; a
 * member is removed after a confirmation. What the signed-in role may not do is not drawn (the contract's role rules:
 * only the owner changes roles; an admin removes operators, never the owner; nobody removes themself), and a 403 the
 * API still gives is shown in its own words.
 */

type InviteRole = 'admin' | 'operator';

const ROLE_HELP: Record<string, string> = {
  owner: 'Everything, including billing and the team',
  admin: 'Agents, keys, triggers, the team and the builder; reads billing',
  operator: 'The inbox: answers visitors who asked for a person',
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * " 2 builder keys and 1 invitation they issued were revoked." and what of the keys they were shown: to rotate, or
 * rotated — or nothing when there was nothing.
 */
function revokedText(revoked: Revoked | undefined): string {
  const keys = revoked?.revoked_builder_keys ?? 0;
  const invitations = revoked?.revoked_invitations ?? 0;
  const parts: string[] = [];
  if (keys) parts.push(plural(keys, 'builder key'));
  if (invitations) parts.push(plural(invitations, 'invitation'));
  const said = parts.length
    ? ` ${parts.join(' and ')} they issued ${keys + invitations === 1 ? 'was' : 'were'} revoked.`
    : '';
  const seen = revoked?.keys_seen.length ?? 0;
  const rotated = revoked?.rotated_keys.length ?? 0;
  if (rotated) return `${said} ${plural(rotated, 'key')} they saw ${rotated === 1 ? 'was' : 'were'} rotated.`;
  if (seen) return `${said} They were shown ${plural(seen, 'key')} that still work: rotate them under Keys to rotate.`;
  return said;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** An address that may wrap after its `@` on a narrow screen, rather than anywhere. */
function Breakable(props: { text: string }) {
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

export function TeamPage() {
  const session = useSession();
  const myRole = session.role;
  const team = useResource(() => teamApi.list(), []);
  const keys = useResource(() => teamApi.builderKeys(), []);
  const seen = useResource(() => teamApi.seenKeys(), []);
  const [rotated, setRotated] = useState<RotatedKey[] | undefined>();
  const [invited, setInvited] = useState<{ email: string; url: string; emailed: boolean } | undefined>();
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

  const canChangeRole = (m: Member) => myRole === 'owner' && !m.you && m.role !== 'owner';
  const canRemove = (m: Member) =>
    !m.you && m.role !== 'owner' && (myRole === 'owner' || (myRole === 'admin' && m.role === 'operator'));

  return (
    <Page title="Team" description="Who works in this workspace, and what each of them may do." wide>
      <div class="visually-hidden" aria-live="polite">
        {message}
      </div>
      <InviteForm
        canInviteAdmins={myRole === 'owner' || myRole === 'admin'}
        onInvited={(inv) => {
          setInvited(inv);
          setMessage(`Invitation for ${inv.email} created.`);
          void team.reload();
        }}
      />
      {invited && (
        <div class="invite-result" role="region" aria-label="Invitation link" data-testid="invite-result">
          <p>
            <strong>Invitation for {invited.email} created.</strong>{' '}
            {invited.emailed
              ? 'We e-mailed this link; you can also pass it on yourself.'
              : 'Send this link to them: it works once, for a limited time.'}
          </p>
          <div class="copy-row">
            <label for="invite-url" class="visually-hidden">
              Invitation link
            </label>
            <input
              id="invite-url"
              class="copy-input"
              readOnly
              value={invited.url}
              data-testid="invite-url"
              onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
            />
            <CopyButton value={invited.url} label="Copy link" small={false} />
          </div>
          <button type="button" class="link invite-dismiss" onClick={() => setInvited(undefined)}>
            Done
          </button>
        </div>
      )}

      <Loaded resource={team.resource} retry={team.retry} label="Loading the team…">
        {(data) => (
          <>
            <Panel title={`Members (${data.members.length})`} id="members">
              <ul class="member-list" data-testid="members">
                {data.members.map((m) => (
                  <MemberRow
                    key={m.id}
                    member={m}
                    canChangeRole={canChangeRole(m)}
                    canRemove={canRemove(m)}
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
          {(['owner', 'admin', 'operator'] as const).map((r) => (
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

function InviteForm(props: {
  canInviteAdmins: boolean;
  onInvited: (inv: { email: string; url: string; emailed: boolean }) => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InviteRole>('operator');
  const [problem, setProblem] = useState<string | undefined>();
  const action = useAction();
  const emailRef = useRef<HTMLInputElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const address = email.trim();
    if (!EMAIL.test(address)) {
      setProblem('Enter an e-mail address, like ana@example.com.');
      emailRef.current?.focus();
      return;
    }
    setProblem(undefined);
    const res = await action.run(() => teamApi.invite(address, role));
    if (res.ok) {
      setEmail('');
      const emailed = (res.value as { emailed?: boolean }).emailed === true;
      props.onInvited({ email: address, url: res.value.invite_url, emailed });
    } else if (res.code === 'already_member') {
      action.clear();
      setProblem(`${address} is already a member of this workspace.`);
    }
  }

  return (
    <Panel title="Invite someone" id="invite" description="They get a link to set a password and join this workspace.">
      <form class="invite-form" onSubmit={(e) => void submit(e)} noValidate>
        <Field id="invite-email" label="E-mail" error={problem}>
          <input
            id="invite-email"
            ref={emailRef}
            type="email"
            autoComplete="off"
            required
            value={email}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? 'invite-email-error' : undefined}
            onInput={(e) => {
              setEmail(valueOf(e));
              setProblem(undefined);
            }}
          />
        </Field>
        <Field id="invite-role" label="Role">
          <select
            id="invite-role"
            value={role}
            onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as InviteRole)}
          >
            <option value="operator">Operator — answers in the inbox</option>
            {props.canInviteAdmins && <option value="admin">Admin — manages agents and the team</option>}
          </select>
        </Field>
        <div class="invite-submit">
          <Button type="submit" variant="primary" busy={action.busy !== false} busyLabel="Inviting…">
            Send invitation
          </Button>
        </div>
      </form>
      {action.failure && <ErrorBox failure={action.failure} title="Not invited." />}
    </Panel>
  );
}

function MemberRow(props: {
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

  async function change(role: InviteRole) {
    if (role === m.role) return;
    const res = await action.run(() => teamApi.setRole(m.id, role));
    if (res.ok) {
      const { revoked_builder_keys, revoked_invitations, keys_seen, rotated_keys, ...member } = res.value;
      const revoked = { revoked_builder_keys, revoked_invitations, keys_seen, rotated_keys };
      props.onChanged(
        { ...m, ...member, role: member.role ?? role },
        revoked_builder_keys || revoked_invitations || keys_seen.length || rotated_keys.length ? revoked : undefined,
      );
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
              onChange={(e) => void change((e.currentTarget as HTMLSelectElement).value as InviteRole)}
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

function Invitations(props: { invitations: Invitation[]; onRevoked: (inv: Invitation) => void }) {
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

/** A modal confirmation (native `<dialog>`: focus is kept inside, Escape cancels, focus returns to the opener). */
function ConfirmRemove(props: { member: Member; onClose: () => void; onRemoved: (revoked?: Revoked) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const action = useAction();
  const display = props.member.name?.trim() || props.member.email;

  useEffect(() => {
    opener.current = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    return () => opener.current?.focus();
  }, []);

  async function remove() {
    const res = await action.run(() => teamApi.remove(props.member.id));
    if (res.ok || res.status === 404) {
      opener.current = document.getElementById('members-title');
      props.onRemoved(res.ok ? res.value : undefined);
    }
  }

  return (
    <dialog
      ref={dialog}
      class="confirm-dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id="confirm-title">Remove {display}?</h2>
      <p id="confirm-text">
        {props.member.email} loses access at once: their sessions end and their account is deleted, and the builder keys
        and pending invitations they issued are revoked. Keys they were shown that still work are listed to rotate (or
        rotated at once, if the workspace is set so). Conversations they answered stay. To bring them back, invite them
        again.
      </p>
      {action.failure && <ErrorBox failure={action.failure} title="Not removed." />}
      <DialogActions>
        <Button onClick={props.onClose} autoFocus>
          Cancel
        </Button>
        <Button variant="danger" busy={action.busy !== false} busyLabel="Removing…" onClick={() => void remove()}>
          Remove {display}
        </Button>
      </DialogActions>
    </dialog>
  );
}

function DialogActions(props: { children: ComponentChildren }) {
  return <div class="dialog-actions">{props.children}</div>;
}
