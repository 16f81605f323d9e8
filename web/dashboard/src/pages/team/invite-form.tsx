import { useRef, useState } from 'preact/hooks';
import { type InvitedRole, teamApi } from '../../api/team';
import { Button, CopyButton } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import { EMAIL } from './model';

/** An invitation made on this page: its link to pass on (it was e-mailed too when the platform can send mail). */
export interface Invited {
  email: string;
  url: string;
  emailed: boolean;
}

/** Invite someone by e-mail with a role; an address already in the workspace is said beside the field. */
export function InviteForm(props: { canInviteAdmins: boolean; onInvited: (inv: Invited) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InvitedRole>('operator');
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
      props.onInvited({ email: address, url: res.value.invite_url, emailed: res.value.emailed === true });
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
            onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as InvitedRole)}
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

/** The invitation just made: its link, to copy, until Done. */
export function InviteResult(props: { invited: Invited; onDone: () => void }) {
  const { invited } = props;
  return (
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
      <button type="button" class="link invite-dismiss" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}
