import { useState } from 'preact/hooks';
import { auth } from '../api/auth';
import { roleLabel } from '../layout';
import { useSession } from '../session';
import type { Result } from '../api/client';
import { LIMITS } from '../../../shared/contract';
import { Button } from '../ui/buttons';
import { Field, PasswordField } from '../ui/fields';
import { Page, Panel } from '../ui/page';
import { useAction } from '../ui/resource';
import { ErrorBox, Notice } from '../ui/status';

/**
 * `/account`: who is signed in, their name and (owners and admins) the workspace's name, a password change (which
 * ends the other sessions), and signing out.
 */
export function AccountPage() {
  const session = useSession();
  const { user, workspace } = session.me;
  const [signingOut, setSigningOut] = useState(false);
  return (
    <Page title="Account">
      <Panel title="You">
        <dl class="dl">
          <dt>E-mail</dt>
          <dd data-testid="account-email">{user.email}</dd>
          <dt>Role</dt>
          <dd>{roleLabel(user.role)}</dd>
        </dl>
        <NameForm
          id="account-name"
          label="Your name"
          hint="Teammates see it in the inbox; visitors see its first word on your replies."
          value={user.name ?? ''}
          optional
          maxChars={LIMITS.account.nameChars}
          save={(name) => auth.rename(name)}
        />
      </Panel>
      <Panel title="Workspace">
        {session.admin ? (
          <NameForm
            id="workspace-name"
            label="Workspace name"
            hint="Shown to your team and in invitations."
            value={workspace.name}
            maxChars={LIMITS.account.workspaceNameChars}
            save={(name) => auth.renameWorkspace(name)}
          />
        ) : (
          <dl class="dl">
            <dt>Name</dt>
            <dd>{workspace.name}</dd>
          </dl>
        )}
      </Panel>
      <ChangePassword />
      <Panel title="Sign out" description="Ends this browser's session. Other devices stay signed in.">
        <Button
          busy={signingOut}
          busyLabel="Signing out…"
          onClick={() => {
            setSigningOut(true);
            void session.signOut().finally(() => setSigningOut(false));
          }}
        >
          Sign out
        </Button>
      </Panel>
    </Page>
  );
}

/** A name and its Save button; the session is read again once it is saved (the top bar shows names). */
function NameForm(props: {
  id: string;
  label: string;
  hint: string;
  value: string;
  optional?: boolean;
  /** The longest name the API takes. */
  maxChars: number;
  save: (name: string) => Promise<Result<unknown>>;
}) {
  const session = useSession();
  const [name, setName] = useState(props.value);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const blank = !props.optional && !name.trim();

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(false);
    if (blank) return;
    const res = await action.run(() => props.save(name.trim()));
    if (res.ok) {
      setSaved(true);
      session.refreshMe();
    }
  }

  return (
    <form class="narrow" onSubmit={(e) => void submit(e)}>
      <Field
        id={props.id}
        label={props.label}
        hint={props.hint}
        optional={props.optional}
        error={blank ? 'Enter a name.' : undefined}
      >
        <input
          id={props.id}
          value={name}
          maxLength={props.maxChars}
          autoComplete={props.id === 'account-name' ? 'name' : 'organization'}
          aria-describedby={`${props.id}-hint`}
          onInput={(e) => {
            setName((e.currentTarget as HTMLInputElement).value);
            setSaved(false);
          }}
        />
      </Field>
      {action.failure && <ErrorBox failure={action.failure} />}
      {saved && <Notice tone="success">Saved.</Notice>}
      <div class="form-actions">
        <Button
          type="submit"
          variant="secondary"
          busy={Boolean(action.busy)}
          busyLabel="Saving…"
          disabled={name.trim() === props.value.trim() || blank}
        >
          Save
        </Button>
      </div>
    </form>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [done, setDone] = useState(false);
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    setDone(false);
    if (next.length < LIMITS.account.passwordMinChars)
      return setProblem(`Use at least ${LIMITS.account.passwordMinChars} characters.`);
    if (next !== again) return setProblem('The two new passwords differ.');
    setProblem(undefined);
    const res = await action.run(() => auth.changePassword(current, next));
    if (res.ok) {
      setDone(true);
      setCurrent('');
      setNext('');
      setAgain('');
    }
  }

  const failure =
    action.failure?.code === 'invalid_credentials'
      ? { ...action.failure, message: 'The current password is wrong.' }
      : action.failure;
  return (
    <Panel title="Change your password" description="Your other sessions end; this one stays signed in.">
      <form class="narrow" onSubmit={(e) => void submit(e)}>
        <PasswordField id="current-password" label="Current password" value={current} onValue={setCurrent} />
        <PasswordField id="account-new-password" label="New password" value={next} onValue={setNext} fresh />
        <PasswordField
          id="account-new-password-again"
          label="New password again"
          value={again}
          onValue={setAgain}
          fresh
          hint={null}
        />
        {problem && <Notice tone="error">{problem}</Notice>}
        {failure && <ErrorBox failure={failure} />}
        {done && <Notice tone="success">Password changed. Other sessions were signed out.</Notice>}
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Saving…">
            Change password
          </Button>
        </div>
      </form>
    </Panel>
  );
}
