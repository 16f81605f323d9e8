import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { alertNewRequests, keepTitleCount } from './alerts';
import { type SignedIn, auth } from './api/auth';
import { type Failure, onUnauthorized } from './api/client';
import { type ShellCounts, notificationsApi } from './api/notifications';
import { ConnectPage } from './connect';
import { forgetSignedInState } from './forget';
import { AppShell, Shell } from './layout';
import { AccountPage } from './pages/account';
import { AgentPage } from './pages/agent/agent';
import { AgentsPage } from './pages/agents';
import { BillingPage } from './pages/billing';
import { BuilderPage } from './pages/builder';
import { InboxPage } from './pages/inbox';
import { InvitePage } from './pages/invite';
import { NotificationsPage } from './pages/notifications';
import { ReportsPage } from './pages/reports';
import { ResetPasswordPage } from './pages/reset-password';
import { SignInPage } from './pages/signin';
import { SignUpPage } from './pages/signup';
import { TeamPage } from './pages/team';
import { VerifyEmailPage } from './pages/verify-email';
import type { PollOutcome } from './poll';
import { type Place, currentAddress, navigate, usePlace } from './router';
import { type Session, SessionContext, sessionOf } from './session';
import { Page } from './ui/page';
import { ErrorBox, Loading } from './ui/status';
import { usePolling } from './use-polling';

/** Pages anyone may open; every other page needs a session (without one: /signin?next=…). */
const PUBLIC = new Set(['/signin', '/signup', '/reset-password', '/invite', '/verify-email', '/connect']);

export function App() {
  const place = usePlace();
  if (place.path === '/connect') return <ConnectPage />;
  if (place.path === '/signin') return <SignInPage />;
  if (place.path === '/signup') return <SignUpPage />;
  if (place.path === '/reset-password') return <ResetPasswordPage />;
  if (place.path === '/invite') return <InvitePage />;
  if (place.path === '/verify-email') return <VerifyEmailPage />;
  return <SignedInApp place={place} />;
}

const signInAddress = (next = currentAddress()) =>
  next === '/' || next === '/signin' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;

type Me = { state: 'loading' } | { state: 'ready'; me: SignedIn } | { state: 'error'; failure: Failure };

/** How often the shell's counts (unread notifications, waiting visitors) are read again while the app is open. */
const COUNTS_POLL_MS = 10_000;

/** The pages behind a session: reads who is signed in once, then draws the shell and the page for the path. */
function SignedInApp(props: { place: Place }) {
  const [me, setMe] = useState<Me>({ state: 'loading' });
  const [counts, setCounts] = useState<ShellCounts>({ unread: 0, waiting: 0 });
  const seenWaiting = useRef<number | undefined>(undefined);

  async function loadMe() {
    const res = await auth.me();
    if (res.ok) setMe({ state: 'ready', me: res.value });
    else if (res.status !== 401) setMe({ state: 'error', failure: res });
    // 401: the listener below has sent the browser to the sign-in page.
  }

  async function loadCounts(): Promise<PollOutcome> {
    const res = await notificationsApi.counts();
    if (!res.ok) return 'failed';
    setCounts(res.value);
    // A visitor asked for a person since the last read (not on the first: those were waiting already).
    if (seenWaiting.current !== undefined) alertNewRequests(seenWaiting.current, res.value.waiting);
    seenWaiting.current = res.value.waiting;
    return 'ok';
  }

  useEffect(() => {
    // A session that ends while a page is open (signed out elsewhere, expired): sign in again, then come back.
    onUnauthorized(() => {
      // What the ended session saw goes with it: whoever signs in next in this tab starts afresh.
      forgetSignedInState();
      if (!PUBLIC.has(location.pathname)) navigate(signInAddress(), { replace: true });
    });
    void loadMe();
    return () => onUnauthorized(undefined);
  }, []);

  // Read while the tab is hidden too: that is when a new request needs the title count and the alert.
  usePolling(loadCounts, { everyMs: COUNTS_POLL_MS, enabled: me.state === 'ready' }, []);
  useEffect(() => keepTitleCount(counts.waiting), [counts.waiting]);

  if (me.state === 'loading') {
    return (
      <Shell>
        <Loading label="Opening your workspace…" />
      </Shell>
    );
  }
  if (me.state === 'error') {
    return (
      <Shell>
        <div class="card">
          <h1>The dashboard cannot open</h1>
          <ErrorBox failure={me.failure} onRetry={() => void loadMe()} />
        </div>
      </Shell>
    );
  }

  const session: Session = sessionOf(me.me, {
    unread: counts.unread,
    waiting: counts.waiting,
    refreshUnread: () => void loadCounts(),
    refreshMe: () => void loadMe(),
    signOut: async () => {
      await auth.logout();
      forgetSignedInState();
      onUnauthorized(undefined);
      navigate('/signin', { replace: true });
    },
  });
  return (
    <SessionContext.Provider value={session}>
      <AppShell>{route(props.place, session)}</AppShell>
    </SessionContext.Provider>
  );
}

function route(place: Place, session: Session): ComponentChildren {
  const parts = place.path.split('/').filter(Boolean).map(decodeURIComponent);
  const [first, id, tab] = parts;
  if (parts.length === 0) {
    return <Redirect to={session.admin ? '/agents' : '/inbox'} />;
  }
  if (first === 'agents' && parts.length === 1) return <AgentsPage />;
  if (first === 'agents' && parts.length <= 3 && id) return <AgentPage key={id} botId={id} tab={tab} />;
  if (parts.length === 1) {
    switch (first) {
      case 'inbox':
        return <InboxPage />;
      case 'notifications':
        return <NotificationsPage />;
      case 'account':
        return <AccountPage />;
      case 'reports':
        return session.admin ? <ReportsPage /> : <NoAccess title="Reports" />;
      case 'billing':
        return session.admin ? <BillingPage /> : <NoAccess title="Billing" />;
      case 'team':
        return session.admin ? <TeamPage /> : <NoAccess title="Team" />;
      case 'builder':
        return session.admin ? <BuilderPage /> : <NoAccess title="Builder" />;
    }
  }
  return <NotFound />;
}

function Redirect(props: { to: string }) {
  useEffect(() => navigate(props.to, { replace: true }), [props.to]);
  return <Loading />;
}

function NoAccess(props: { title: string }) {
  return (
    <Page title={props.title}>
      <div class="panel">
        <p>
          Only the workspace&rsquo;s owner and admins can open this page. Ask one of them if you need something here.
        </p>
      </div>
    </Page>
  );
}

function NotFound() {
  return (
    <Page title="Page not found">
      <div class="panel">
        <p>There is no page at this address.</p>
      </div>
    </Page>
  );
}
