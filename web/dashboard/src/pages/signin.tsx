import { useEffect, useState } from 'preact/hooks';
import { auth } from '../api/auth';
import { Card, Shell } from '../layout';
import { Link, navigate, safeNext, usePlace } from '../router';
import { SignInForm } from '../sign-in';
import { Loading } from '../ui/status';

/** `/signin?next=/agents/…`: back to where the visitor was going once signed in (only addresses of this app). */
export function SignInPage() {
  const place = usePlace();
  const next = safeNext(place.search.get('next'));
  const [checking, setChecking] = useState(true);

  // Someone already signed in goes straight on.
  useEffect(() => {
    void auth.me().then((res) => {
      if (res.ok) navigate(next, { replace: true });
      else setChecking(false);
    });
  }, []);

  return (
    <Shell>
      {checking ? (
        <Loading />
      ) : (
        <Card title="Sign in">
          <p class="muted">Sign in to manage your agents and answer your visitors.</p>
          <SignInForm forgotLink onSignedIn={() => navigate(next, { replace: true })} />
          <p class="card-footer">
            New here? <Link href="/signup">Create a workspace</Link>
          </p>
        </Card>
      )}
    </Shell>
  );
}
