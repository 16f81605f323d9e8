import { useEffect, useState } from 'preact/hooks';
import { type SignedIn, auth } from './api/auth';
import { type Pairing, pairing as pairings } from './api/pairing';
import type { Result } from './api/client';
import { Card, Shell, roleLabel } from './layout';
import { SignInForm } from './sign-in';
import { forgetSignedInState } from './forget';
import { Notice } from './ui/status';
import { useNow } from './use-now';
import { LIMITS } from '../../shared/contract';

/**
 * `/connect?code=ABCD-EFGH`: the workspace owner approves a builder client that started a pairing (contract, Builder key
 * pairing). The page shows the client's name and code for the owner to compare with the client's own screen; the
 * key goes from the API to the client directly and never reaches this page.
 */
type View =
  | { kind: 'loading' }
  | { kind: 'signin' }
  | { kind: 'enter-code'; error?: string }
  | { kind: 'review'; pairing: Pairing; error?: string; busy?: boolean }
  | { kind: 'connected'; pairing: Pairing }
  | { kind: 'declined'; pairing: Pairing }
  | { kind: 'gone' }
  | { kind: 'failed'; message: string };

function codeFromAddress(): string {
  return new URLSearchParams(location.search).get('code')?.trim() ?? '';
}

function minutesLeft(expiresAt: number, now: number): number {
  return Math.max(0, Math.ceil((expiresAt - now) / 60_000));
}

/** What the page shows for the pairing the API found (or did not). */
function viewOfFound(found: Result<Pairing>): View {
  if (found.ok) {
    const pairing = found.value;
    return pairing.status === 'pending' ? { kind: 'review', pairing } : { kind: 'connected', pairing };
  }
  if (found.status === 404 || found.status === 400) return { kind: 'gone' };
  if (found.status === 401) return { kind: 'signin' };
  return { kind: 'failed', message: found.message };
}

/** The expiry shown counts down every 10 s; a request that runs out while the page is open says so. */
const COUNTDOWN_MS = 10_000;

export function ConnectPage() {
  const [view, setView] = useState<View>({ kind: 'loading' });
  const [me, setMe] = useState<SignedIn | null>(null);
  const [code, setCode] = useState(codeFromAddress);
  const now = useNow(COUNTDOWN_MS);

  async function load(forCode = code) {
    const who = await auth.me();
    if (!who.ok) {
      setMe(null);
      setView(who.status === 401 ? { kind: 'signin' } : { kind: 'failed', message: who.message });
      return;
    }
    setMe(who.value);
    setView(forCode ? viewOfFound(await pairings.get(forCode)) : { kind: 'enter-code' });
  }

  useEffect(() => {
    void load();
  }, []);

  useEffect(() => {
    if (view.kind === 'review' && view.pairing.expires_at <= now) setView({ kind: 'gone' });
  }, [now, view]);

  async function approve(pairing: Pairing) {
    setView({ kind: 'review', pairing, busy: true });
    const res = await pairings.approve(pairing.code);
    if (res.ok) setView({ kind: 'connected', pairing: res.value });
    else if (res.status === 404) setView({ kind: 'gone' });
    else if (res.status === 401) setView({ kind: 'signin' });
    // 403 (not the owner) and anything else: the API's own words, next to the button.
    else setView({ kind: 'review', pairing, error: res.message });
  }

  async function signOut() {
    await auth.logout();
    forgetSignedInState();
    setMe(null);
    setView({ kind: 'signin' });
  }

  function submitCode(event: Event) {
    event.preventDefault();
    const typed = code.trim().toUpperCase();
    if (!typed) {
      setView({ kind: 'enter-code', error: 'Type the code your client shows.' });
      return;
    }
    history.replaceState(null, '', `/connect?code=${encodeURIComponent(typed)}`);
    setView({ kind: 'loading' });
    void load(typed);
  }

  return (
    <Shell user={me?.user.email} onSignOut={me ? () => void signOut() : undefined}>
      {view.kind === 'loading' && (
        <Card title="Connect a builder client">
          <p class="muted">Loading…</p>
        </Card>
      )}

      {view.kind === 'signin' && (
        <Card title="Sign in to connect a client">
          <p class="muted">A builder client asked to connect to your workspace. Sign in to review it.</p>
          <SignInForm onSignedIn={() => void load()} />
        </Card>
      )}

      {view.kind === 'enter-code' && (
        <EnterCode code={code} error={view.error} onCode={setCode} onSubmit={submitCode} />
      )}

      {view.kind === 'review' && me && (
        <Review
          view={view}
          me={me}
          now={now}
          onApprove={() => void approve(view.pairing)}
          onDecline={() => setView({ kind: 'declined', pairing: view.pairing })}
        />
      )}

      {(view.kind === 'connected' || view.kind === 'declined' || view.kind === 'gone' || view.kind === 'failed') && (
        <Outcome view={view} onRetry={() => void load()} />
      )}
    </Shell>
  );
}

function EnterCode(props: {
  code: string;
  error?: string;
  onCode: (code: string) => void;
  onSubmit: (event: Event) => void;
}) {
  return (
    <Card title="Connect a builder client">
      <form class="form" onSubmit={props.onSubmit}>
        <label for="code">Code shown by your client</label>
        <input
          id="code"
          name="code"
          class="code-input"
          autoComplete="off"
          spellcheck={false}
          placeholder="ABCD-EFGH"
          value={props.code}
          onInput={(e) => props.onCode((e.target as HTMLInputElement).value)}
        />
        {props.error && <Notice tone="error">{props.error}</Notice>}
        <button type="submit" class="primary">
          Continue
        </button>
      </form>
    </Card>
  );
}

/** The client's name and code to compare with its own screen; Approve for the owner, a word to ask them for others. */
function Review(props: {
  view: Extract<View, { kind: 'review' }>;
  me: SignedIn;
  now: number;
  onApprove: () => void;
  onDecline: () => void;
}) {
  const { view, me } = props;
  return (
    <Card title="Connect a builder client">
      <p>
        <strong class="device" data-testid="device">
          {view.pairing.device}
        </strong>{' '}
        wants to build and change the agents of <strong>{me.workspace.name}</strong>.
      </p>
      <div class="code-box">
        <span class="code-label">Code</span>
        <span class="code" data-testid="code">
          {view.pairing.code}
        </span>
      </div>
      <p>
        Check that this code is exactly the one <strong>{view.pairing.device}</strong> shows. Approve only if you
        started this connection yourself.
      </p>
      <p class="muted small">
        The client will act on your agents as you would, but cannot pay, delete agents or manage the team. Clients you
        connected before stay connected. This request expires in {minutesLeft(view.pairing.expires_at, props.now)} min.
      </p>
      {me.user.role !== 'owner' ? (
        <Notice tone="warning">
          Only the owner of {me.workspace.name} can connect a builder client. You are signed in as {me.user.email} (
          {roleLabel(me.user.role).toLowerCase()}). Ask the workspace owner to open this page and approve the code.
        </Notice>
      ) : (
        <>
          {view.error && <Notice tone="error">{view.error}</Notice>}
          <div class="actions">
            <button type="button" class="primary" disabled={view.busy} onClick={props.onApprove}>
              {view.busy ? 'Approving…' : 'Approve'}
            </button>
            <button type="button" class="secondary" disabled={view.busy} onClick={props.onDecline}>
              It is not mine
            </button>
          </div>
        </>
      )}
    </Card>
  );
}

/** Where a pairing ended on this page: connected, declined, gone (unknown or expired), or a failure to try again. */
function Outcome(props: {
  view: Extract<View, { kind: 'connected' | 'declined' | 'gone' | 'failed' }>;
  onRetry: () => void;
}) {
  const { view } = props;
  if (view.kind === 'connected') {
    return (
      <Card title="All set" tone="success">
        <p class="big" data-testid="connected">
          Connected. Go back to <strong>{view.pairing.device}</strong>.
        </p>
        <p class="muted">The client receives its key directly; it is never shown here. You can close this page.</p>
      </Card>
    );
  }
  if (view.kind === 'declined') {
    return (
      <Card title="Not connected">
        <p>
          Nothing was approved: <strong>{view.pairing.device}</strong> gets no access. The request expires by itself.
          You can close this page.
        </p>
      </Card>
    );
  }
  if (view.kind === 'gone') {
    return (
      <Card title="Code not valid" tone="warning">
        <p data-testid="gone">This code is unknown or has expired.</p>
        <p class="muted">
          Start the connection again from your client: it will show a new code and a new link. Codes last{' '}
          {LIMITS.pairing.lifetimeSeconds / 60} minutes.
        </p>
      </Card>
    );
  }
  return (
    <Card title="Something went wrong" tone="warning">
      <Notice tone="error">{view.message}</Notice>
      <button type="button" class="secondary" onClick={props.onRetry}>
        Try again
      </button>
    </Card>
  );
}
