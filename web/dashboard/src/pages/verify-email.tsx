import { auth } from '../api/auth';
import { ResendOutcome, useResendLink } from '../email-confirmation';
import { Card, Shell } from '../layout';
import { isWholeLinkToken } from '../link-token';
import { Link, takeLinkToken, usePlace } from '../router';
import { Button } from '../ui/buttons';
import { formatNumber } from '../ui/format';
import { useResource } from '../ui/resource';
import { ErrorBox, Loading } from '../ui/status';

/**
 * `/verify-email#token=…`: the link e-mailed at sign-up confirms the address (`POST /v1/auth/verify-email`) as soon as
 * it opens, and says what that granted. A link expired, replaced or cut offers a new one to whoever is signed in.
 */
export function VerifyEmailPage() {
  usePlace();
  const token = takeLinkToken();
  return <Shell>{!token ? <NoLink /> : isWholeLinkToken(token) ? <Confirm token={token} /> : <CutLink />}</Shell>;
}

function Confirm(props: { token: string }) {
  const confirmed = useResource(() => auth.verifyEmail(props.token), [props.token]);
  const { resource } = confirmed;
  if (resource.state === 'loading') return <Loading label="Confirming your e-mail address…" />;
  if (resource.state === 'error') {
    if (resource.failure.code === 'invalid_token') return <Expired />;
    return (
      <Card title="Your address is not confirmed yet">
        <ErrorBox failure={resource.failure} onRetry={confirmed.retry} />
      </Card>
    );
  }
  const { email, credits_granted: credits } = resource.data;
  return (
    <Card title="Your e-mail address is confirmed" tone="success">
      <p role="status" data-testid="email-confirmed">
        Thank you: <strong>{email}</strong> is confirmed.
        {credits > 0 &&
          ` ${formatNumber(credits)} included credits were added to your workspace: your agents can answer now.`}
      </p>
      <p class="card-footer">
        <Link href="/">Go to your dashboard</Link>
      </p>
    </Card>
  );
}

function Expired() {
  return (
    <Card title="This link has expired or was already used" tone="warning">
      <p role="alert">
        A confirmation link works for 48 hours, and once a new one is sent only the newest works. Open the newest
        e-mail, or ask for a new link.
      </p>
      <NewLink />
    </Card>
  );
}

/** Said at once: the link lost its end on the way (some e-mail programs cut long links). */
function CutLink() {
  return (
    <Card title="This link is incomplete" tone="warning">
      <p role="alert">
        Part of the link seems to be missing — some e-mail programs cut long links. Open the link from the e-mail again,
        or copy all of it into the address bar.
      </p>
      <NewLink />
    </Card>
  );
}

function NoLink() {
  return (
    <Card title="Confirm your e-mail address">
      <p>Open the link in the e-mail we sent you when you created your workspace.</p>
      <NewLink />
    </Card>
  );
}

/** A new link for whoever is signed in and still unconfirmed; otherwise where to go. */
function NewLink() {
  const me = useResource(() => auth.me(), []);
  const { outcome, send } = useResendLink();
  const { resource } = me;
  if (resource.state === 'loading') return <Loading inline />;
  if (resource.state === 'error') {
    return (
      <p class="card-footer">
        <Link href="/signin?next=%2Fverify-email">Sign in</Link> to have a new link sent.
      </p>
    );
  }
  const { user } = resource.data;
  if (user.email_verified || outcome.state === 'confirmed') {
    return (
      <p class="card-footer">
        <strong>{user.email}</strong> is confirmed already. <Link href="/">Go to your dashboard</Link>
      </p>
    );
  }
  return (
    <div class="card-footer resend-footer">
      <Button
        variant="primary"
        busy={outcome.state === 'sending'}
        busyLabel="Sending…"
        disabled={outcome.state === 'sent'}
        onClick={() => void send()}
      >
        Send a new link
      </Button>
      <ResendOutcome outcome={outcome} email={user.email} />
    </div>
  );
}
