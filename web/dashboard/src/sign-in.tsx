import { useState } from 'preact/hooks';
import { auth } from './api/auth';
import { Link } from './router';
import { Notice } from './ui/status';

/** Sign-in with the dashboard account (`POST /v1/auth/login`); the session is an HttpOnly cookie. */
export function SignInForm(props: { onSignedIn: () => void; forgotLink?: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const res = await auth.login(email.trim(), password);
    setBusy(false);
    if (res.ok) {
      setPassword('');
      props.onSignedIn();
    } else if (res.code === 'invalid_credentials') {
      setError('Wrong e-mail or password.');
    } else if (res.code === 'rate_limited') {
      setError(`Too many attempts. Try again in ${res.retryAfter ?? 60} seconds.`);
    } else if (res.code === 'bad_request') {
      setError('Enter your e-mail and password.');
    } else {
      setError(res.message);
    }
  }

  return (
    <form class="form" onSubmit={(e) => void submit(e)}>
      <label for="email">E-mail</label>
      <input
        id="email"
        name="email"
        type="email"
        autoComplete="username"
        required
        value={email}
        onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
      />
      <div class="label-row">
        <label for="password">Password</label>
        {props.forgotLink && (
          <Link class="small" href="/reset-password">
            Forgot your password?
          </Link>
        )}
      </div>
      <input
        id="password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        value={password}
        onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
      />
      {error && <Notice tone="error">{error}</Notice>}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
