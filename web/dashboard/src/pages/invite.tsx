import { useState } from 'preact/hooks';
import { auth } from '../api/auth';
import type { Failure } from '../api/client';
import { Card, Shell, roleLabel } from '../layout';
import { isWholeLinkToken } from '../link-token';
import { Link, navigate, takeLinkToken, usePlace } from '../router';
import { LIMITS } from '../../../shared/contract';
import { Button } from '../ui/buttons';
import { Field, PasswordField, valueOf } from '../ui/fields';
import { Loaded, useResource } from '../ui/resource';
import { ErrorBox, Notice } from '../ui/status';

/** `/invite#token=…`: someone invited to a workspace sets a password and joins (`POST /v1/auth/invitation/accept`). */
export function InvitePage() {
  usePlace();
  const token = takeLinkToken() ?? '';
  if (!token)
    return (
      <Shell>
        <Gone />
      </Shell>
    );
  return <Shell>{isWholeLinkToken(token) ? <Invitation token={token} /> : <CutLink />}</Shell>;
}

/** Said at once, not after a password was typed and refused: the link is not whole. */
function CutLink() {
  return (
    <Card title="This link is incomplete" tone="warning">
      <p role="alert" data-testid="invite-cut">
        Part of the invitation link seems to be missing — some e-mail programs cut long links. Open the link from the
        e-mail again, or copy all of it into the address bar.
      </p>
      <p class="muted">If it still does not work, ask the person who invited you to send a new invitation.</p>
      <p class="card-footer">
        <Link href="/signin">Go to sign in</Link>
      </p>
    </Card>
  );
}

function Gone() {
  return (
    <Card title="Invitation not valid" tone="warning">
      <p data-testid="invite-gone">This invitation is unknown, has expired or was already used.</p>
      <p class="muted">Ask the person who invited you to send a new one.</p>
      <p class="card-footer">
        <Link href="/signin">Go to sign in</Link>
      </p>
    </Card>
  );
}

function Invitation(props: { token: string }) {
  const invitation = useResource(() => auth.invitation(props.token), [props.token]);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | undefined>();

  if (invitation.state === 'error' && invitation.failure.status === 404) return <Gone />;

  async function submit(event: Event) {
    event.preventDefault();
    if (password.length < LIMITS.account.passwordMinChars)
      return setProblem(`Use at least ${LIMITS.account.passwordMinChars} characters.`);
    setProblem(undefined);
    setBusy(true);
    setFailure(undefined);
    const res = await auth.acceptInvitation(props.token, { password, name: name.trim() || undefined });
    setBusy(false);
    if (res.ok) navigate('/', { replace: true });
    else setFailure(res);
  }

  return (
    <Loaded resource={invitation.resource} retry={invitation.retry} label="Reading the invitation…">
      {(inv) => (
        <Card title={`Join ${inv.workspace.name}`}>
          <p>
            {inv.invited_by ? <strong>{inv.invited_by}</strong> : 'A workspace admin'} invited{' '}
            <strong>{inv.email}</strong> to <strong>{inv.workspace.name}</strong> as {roleLabel(inv.role).toLowerCase()}
            .
          </p>
          <form class="form" onSubmit={(e) => void submit(e)}>
            <Field id="invite-email" label="E-mail">
              <input id="invite-email" type="email" autoComplete="username" value={inv.email} readOnly />
            </Field>
            <Field id="invite-name" label="Your name" optional>
              <input id="invite-name" autoComplete="name" value={name} onInput={(e) => setName(valueOf(e))} />
            </Field>
            <PasswordField
              id="invite-password"
              label="Choose a password"
              value={password}
              onValue={setPassword}
              fresh
            />
            {problem && <Notice tone="error">{problem}</Notice>}
            {failure &&
              (failure.code === 'email_taken' ? (
                <div class="notice notice-error" role="alert">
                  An account with this e-mail already exists. <Link href="/signin">Sign in</Link> with it instead.
                </div>
              ) : (
                <ErrorBox failure={failure} />
              ))}
            <Button type="submit" variant="primary" busy={busy} busyLabel="Joining…">
              Join {inv.workspace.name}
            </Button>
          </form>
        </Card>
      )}
    </Loaded>
  );
}
