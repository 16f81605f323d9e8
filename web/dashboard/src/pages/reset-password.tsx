import { useState } from 'preact/hooks';
import { auth } from '../api/auth';
import type { Failure } from '../api/client';
import { isWholeLinkToken } from '../link-token';
import { Card, Shell } from '../layout';
import { Link, forgetLinkToken, navigate, takeLinkToken, usePlace } from '../router';
import { LIMITS } from '../../../shared/contract';
import { Button } from '../ui/buttons';
import { Field, PasswordField, valueOf } from '../ui/fields';
import { ErrorBox, Notice } from '../ui/status';

/**
 * `/reset-password`: without a token, ask for the e-mail (the API answers the same whether or not the account
 * exists); with the token of the e-mailed link (`#token=`), choose a new password, which also signs in.
 */
export function ResetPasswordPage() {
  usePlace();
  const [token, setToken] = useState(takeLinkToken);
  // "Ask for a new link" leaves this link behind: the page starts over without its token.
  const askAgain = () => {
    forgetLinkToken('/reset-password');
    setToken(null);
  };
  if (!token)
    return (
      <Shell>
        <RequestLink />
      </Shell>
    );
  return (
    <Shell>
      {isWholeLinkToken(token) ? <ChooseNew token={token} askAgain={askAgain} /> : <CutLink askAgain={askAgain} />}
    </Shell>
  );
}

/** Said at once, not after a new password was typed and refused: the link is not whole. */
function CutLink(props: { askAgain: () => void }) {
  return (
    <Card title="This link is incomplete">
      <p role="alert">
        Part of the link seems to be missing — some e-mail programs cut long links. Open the link from the e-mail again,
        or copy all of it into the address bar.
      </p>
      <p class="card-footer">
        <Link href="/reset-password" onNavigate={props.askAgain}>
          Ask for a new link
        </Link>
      </p>
    </Card>
  );
}

function RequestLink() {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<Failure | undefined>();

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setFailure(undefined);
    const res = await auth.requestReset(email.trim());
    setBusy(false);
    if (res.ok) setSent(true);
    else setFailure(res);
  }

  if (sent) {
    return (
      <Card title="Check your e-mail" tone="success">
        <p role="status">
          If <strong>{email.trim()}</strong> has an account, a link to choose a new password is on its way. The link
          works once and expires soon.
        </p>
        <p class="card-footer">
          <Link href="/signin">Back to sign in</Link>
        </p>
      </Card>
    );
  }
  return (
    <Card title="Reset your password">
      <p class="muted">Enter the e-mail you sign in with; we will send a link to choose a new password.</p>
      <form class="form" onSubmit={(e) => void submit(e)}>
        <Field id="reset-email" label="E-mail">
          <input
            id="reset-email"
            type="email"
            required
            autoComplete="username"
            value={email}
            onInput={(e) => setEmail(valueOf(e))}
          />
        </Field>
        {failure && <ErrorBox failure={failure} />}
        <Button type="submit" variant="primary" busy={busy} busyLabel="Sending…">
          Send the link
        </Button>
      </form>
      <p class="card-footer">
        <Link href="/signin">Back to sign in</Link>
      </p>
    </Card>
  );
}

function ChooseNew(props: { token: string; askAgain: () => void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | undefined>();

  async function submit(event: Event) {
    event.preventDefault();
    if (password.length < LIMITS.account.passwordMinChars)
      return setProblem(`Use at least ${LIMITS.account.passwordMinChars} characters.`);
    if (password !== again) return setProblem('The two passwords differ.');
    setProblem(undefined);
    setBusy(true);
    setFailure(undefined);
    const res = await auth.confirmReset(props.token, password);
    setBusy(false);
    if (res.ok) navigate('/', { replace: true });
    else setFailure(res);
  }

  return (
    <Card title="Choose a new password">
      <form class="form" onSubmit={(e) => void submit(e)}>
        <PasswordField id="new-password" label="New password" value={password} onValue={setPassword} fresh />
        <PasswordField
          id="new-password-again"
          label="New password again"
          value={again}
          onValue={setAgain}
          fresh
          hint={null}
        />
        {problem && <Notice tone="error">{problem}</Notice>}
        {failure &&
          (failure.code === 'invalid_token' ? (
            <div class="notice notice-error" role="alert">
              This link has expired or was already used.{' '}
              <Link href="/reset-password" onNavigate={props.askAgain}>
                Ask for a new one
              </Link>
              .
            </div>
          ) : (
            <ErrorBox failure={failure} />
          ))}
        <Button type="submit" variant="primary" busy={busy} busyLabel="Saving…">
          Save and sign in
        </Button>
      </form>
    </Card>
  );
}
