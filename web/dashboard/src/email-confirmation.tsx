import { useState } from 'preact/hooks';
import { auth } from './api/auth';
import type { Failure } from './api/client';
import { useSession } from './session';
import { Button } from './ui/buttons';
import { formatNumber } from './ui/format';
import { describeFailure } from './ui/status';
import './email-confirmation.css';

/**
 * Confirming one's e-mail address (docs/decisions/111-signup-verification.md): the banner the signed-in
 * pages show until it is confirmed, and "send a new link", which the /verify-email page offers too.
 */

export type ResendState =
  | { state: 'idle' }
  | { state: 'sending' }
  | { state: 'sent' }
  /** Confirmed meanwhile (another tab, an older link): nothing to send. */
  | { state: 'confirmed' }
  | { state: 'failed'; failure: Failure };

/** `POST /v1/auth/verify-email/resend` and what came of it. */
export function useResendLink() {
  const [outcome, setOutcome] = useState<ResendState>({ state: 'idle' });
  async function send(): Promise<ResendState> {
    setOutcome({ state: 'sending' });
    const res = await auth.resendVerification();
    const next: ResendState = res.ok
      ? { state: 'sent' }
      : res.status === 409
        ? { state: 'confirmed' }
        : { state: 'failed', failure: res };
    setOutcome(next);
    return next;
  }
  return { outcome, send };
}

/** What a resend came to, in words; nothing before one. */
export function ResendOutcome(props: { outcome: ResendState; email: string }) {
  const { outcome } = props;
  if (outcome.state === 'sent')
    return (
      <span class="resend-outcome" role="status">
        Sent. Only the newest link works; it may take a minute to reach {props.email}.
      </span>
    );
  if (outcome.state === 'confirmed')
    return (
      <span class="resend-outcome" role="status">
        Your address is confirmed already.
      </span>
    );
  if (outcome.state === 'failed') {
    const { failure } = outcome;
    const text =
      failure.status === 429
        ? `Several new links were sent in the last hour; try again in ${Math.max(1, Math.ceil((failure.retryAfter ?? 60) / 60))} min.`
        : describeFailure(failure);
    return (
      <span class="resend-outcome resend-outcome-error" role="alert">
        {text}
      </span>
    );
  }
  return null;
}

/**
 * Above every signed-in page while the person has not confirmed their address: what waits for it (the workspace's
 * included credits) and "Send it again". It goes once `GET /v1/auth/me` says confirmed (the next page load).
 */
export function EmailBanner() {
  const session = useSession();
  const { user, workspace } = session.me;
  const { outcome, send } = useResendLink();
  if (user.email_verified) return null;
  const credits = workspace.credits_awaiting_confirmation;

  async function resend() {
    const next = await send();
    // Confirmed in another tab: read the session again and the banner goes.
    if (next.state === 'confirmed') session.refreshMe();
  }

  return (
    <div class="email-banner notice notice-warning" data-testid="email-banner">
      <div class="email-banner-text">
        <p>
          {credits > 0
            ? `Confirm your e-mail address to receive your ${formatNumber(credits)} included credits`
            : 'Confirm your e-mail address'}{' '}
          — we sent a link to <strong>{user.email}</strong>.
        </p>
        <ResendOutcome outcome={outcome} email={user.email} />
      </div>
      <Button small busy={outcome.state === 'sending'} busyLabel="Sending…" onClick={() => void resend()}>
        Send it again
      </Button>
    </div>
  );
}
