import { useState } from 'preact/hooks';
import { auth } from '../api/auth';
import type { Failure } from '../api/client';
import { Card, Shell } from '../layout';
import { Link, navigate } from '../router';
import { LIMITS } from '../../../shared/contract';
import { Button } from '../ui/buttons';
import { Field, valueOf } from '../ui/fields';
import { ErrorBox } from '../ui/status';

/** `/signup`: a new workspace and its owner (`POST /v1/auth/signup`), signed in at once. */
export function SignUpPage() {
  const [form, setForm] = useState({ name: '', workspace: '', email: '', password: '' });
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | undefined>();
  const [tooShort, setTooShort] = useState(false);
  const set = (key: keyof typeof form) => (event: Event) => {
    setForm({ ...form, [key]: valueOf(event) });
    if (key === 'password') setTooShort(false);
  };

  async function submit(event: Event) {
    event.preventDefault();
    if (form.password.length < LIMITS.account.passwordMinChars) {
      setTooShort(true);
      document.getElementById('signup-password')?.focus();
      return;
    }
    setTooShort(false);
    setBusy(true);
    setFailure(undefined);
    const res = await auth.signup({
      email: form.email.trim(),
      password: form.password,
      name: form.name.trim() || undefined,
      workspace_name: form.workspace.trim(),
    });
    setBusy(false);
    if (res.ok) navigate('/agents', { replace: true });
    else setFailure(res);
  }

  return (
    <Shell>
      <Card title="Create your workspace">
        <p class="muted">One workspace holds your agents, their knowledge and your team.</p>
        <form class="form" onSubmit={(e) => void submit(e)} noValidate={false}>
          <Field id="signup-workspace" label="Workspace name" hint="Your company or project; you can change it later.">
            <input
              id="signup-workspace"
              name="workspace"
              required
              maxLength={LIMITS.account.workspaceNameChars}
              autoComplete="organization"
              value={form.workspace}
              onInput={set('workspace')}
            />
          </Field>
          <Field id="signup-name" label="Your name" optional>
            <input id="signup-name" name="name" autoComplete="name" value={form.name} onInput={set('name')} />
          </Field>
          <Field id="signup-email" label="E-mail">
            <input
              id="signup-email"
              name="email"
              type="email"
              required
              autoComplete="username"
              value={form.email}
              onInput={set('email')}
            />
          </Field>
          <Field
            id="signup-password"
            label="Password"
            hint={`At least ${LIMITS.account.passwordMinChars} characters.`}
            error={tooShort ? `Use at least ${LIMITS.account.passwordMinChars} characters.` : undefined}
          >
            <input
              id="signup-password"
              name="password"
              type="password"
              required
              autoComplete="new-password"
              aria-invalid={tooShort || undefined}
              aria-describedby={tooShort ? 'signup-password-error' : 'signup-password-hint'}
              value={form.password}
              onInput={set('password')}
            />
          </Field>
          {failure &&
            (failure.code === 'email_taken' ? (
              <div class="notice notice-error" role="alert">
                An account with this e-mail already exists. <Link href="/signin">Sign in</Link> instead, or{' '}
                <Link href="/reset-password">reset its password</Link>.
              </div>
            ) : (
              <ErrorBox failure={failure} />
            ))}
          <Button type="submit" variant="primary" busy={busy} busyLabel="Creating…">
            Create workspace
          </Button>
        </form>
        <p class="card-footer">
          Already have an account? <Link href="/signin">Sign in</Link>
        </p>
      </Card>
    </Shell>
  );
}
