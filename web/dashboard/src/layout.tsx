import type { ComponentChildren } from 'preact';

export function Shell(props: { children: ComponentChildren; user?: string; onSignOut?: () => void }) {
  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">
          <span class="brand-mark" aria-hidden="true">
            A
          </span>
          Agent Platform
        </span>
        {props.user && (
          <span class="who">
            <span class="who-email">{props.user}</span>
            {props.onSignOut && (
              <button type="button" class="link" onClick={props.onSignOut}>
                Sign out
              </button>
            )}
          </span>
        )}
      </header>
      <main class="content">{props.children}</main>
    </div>
  );
}

export function Card(props: { title: string; children: ComponentChildren; tone?: 'success' | 'warning' }) {
  return (
    <section class={`card${props.tone ? ` card-${props.tone}` : ''}`} aria-labelledby="card-title">
      <h1 id="card-title">{props.title}</h1>
      {props.children}
    </section>
  );
}

export function Notice(props: { children: ComponentChildren; tone?: 'error' | 'warning' | 'info' }) {
  return (
    <div class={`notice notice-${props.tone ?? 'info'}`} role={props.tone === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}
