import { useState } from 'preact/hooks';
import { auth } from '../api/auth';
import { roleLabel } from '../layout';
import { useSession } from '../session';
import { Button, ErrorBox, MIN_PASSWORD, Notice, Page, Panel, PasswordField, useAction } from '../ui';

/** `/account`: who is signed in, a password change (which ends the other sessions), and signing out. */
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
          {user.name && (
            <>
              <dt>Name</dt>
              <dd>{user.name}</dd>
            </>
          )}
          <dt>Workspace</dt>
          <dd>{workspace.name}</dd>
          <dt>Role</dt>
          <dd>{roleLabel(user.role)}</dd>
        </dl>
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
    if (next.length < MIN_PASSWORD) return setProblem(`Use at least ${MIN_PASSWORD} characters.`);
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
