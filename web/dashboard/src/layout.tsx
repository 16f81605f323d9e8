import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { EmailBanner } from './email-confirmation';
import { Link, usePlace } from './router';
import { useSession } from './session';

function Brand(props: { href?: string }) {
  const inner = (
    <>
      <span class="brand-mark" aria-hidden="true">
        A
      </span>
      <span class="brand-name">Agent Platform</span>
    </>
  );
  return props.href ? (
    <Link class="brand" href={props.href}>
      {inner}
    </Link>
  ) : (
    <span class="brand">{inner}</span>
  );
}

/**
 * The frame of the pages used without the app's navigation: sign-in, sign-up, password reset, invitations and
 * /connect. One centered card under a slim top bar.
 */
export function Shell(props: { children: ComponentChildren; user?: string; onSignOut?: () => void }) {
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar topbar-public">
        <Brand />
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
      <main class="content" id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

export function Card(props: { title: string; children: ComponentChildren; tone?: 'success' | 'warning' }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Agent Platform`;
  }, [props.title]);
  return (
    <section class={`card${props.tone ? ` card-${props.tone}` : ''}`} aria-labelledby="card-title">
      <h1 id="card-title" ref={heading} tabIndex={-1}>
        {props.title}
      </h1>
      {props.children}
    </section>
  );
}

interface NavItem {
  href: string;
  label: string;
  adminOnly?: boolean;
  badge?: number;
  /** What the badge counts, for screen readers: "unread", "waiting". */
  badgeLabel?: string;
}

/** Closes a popup on Escape (focus back on its button) and on a click outside it. */
function useDismiss(
  open: boolean,
  close: () => void,
  root: { current: HTMLElement | null },
  button: { current: HTMLElement | null },
) {
  useEffect(() => {
    if (!open) return;
    function key(event: KeyboardEvent) {
      if (event.key === 'Escape') {
        close();
        button.current?.focus();
      }
    }
    function click(event: MouseEvent) {
      const target = event.target as Node;
      if (root.current?.contains(target) || button.current?.contains(target)) return;
      close();
    }
    document.addEventListener('keydown', key);
    document.addEventListener('mousedown', click);
    return () => {
      document.removeEventListener('keydown', key);
      document.removeEventListener('mousedown', click);
    };
  }, [open]);
}

function UserMenu() {
  const session = useSession();
  const { user, workspace } = session.me;
  const [open, setOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useDismiss(open, () => setOpen(false), root, button);
  const display = user.name?.trim() || user.email;
  const initial = display.trim().charAt(0).toUpperCase() || '?';
  return (
    <div class="user-menu" ref={root}>
      <button
        type="button"
        class="user-button"
        ref={button}
        aria-expanded={open}
        aria-controls="user-menu-panel"
        aria-haspopup="true"
        onClick={() => setOpen(!open)}
      >
        <span class="avatar" aria-hidden="true">
          {initial}
        </span>
        <span class="user-button-name">{display}</span>
        <span class="visually-hidden">, account menu</span>
        <span class="caret" aria-hidden="true" />
      </button>
      {open && (
        <div class="user-menu-panel" id="user-menu-panel">
          <div class="user-menu-who">
            <strong>{display}</strong>
            {user.name && <span class="muted small">{user.email}</span>}
            <span class="muted small">
              {roleLabel(user.role)} of {workspace.name}
            </span>
          </div>
          <Link class="menu-item" href="/account" onNavigate={() => setOpen(false)}>
            Account
          </Link>
          <button
            type="button"
            class="menu-item"
            disabled={signingOut}
            onClick={() => {
              setSigningOut(true);
              void session.signOut().finally(() => setSigningOut(false));
            }}
          >
            {signingOut ? 'Signing out…' : 'Sign out'}
          </button>
        </div>
      )}
    </div>
  );
}

export const roleLabel = (role: string) =>
  role === 'owner'
    ? 'Owner'
    : role === 'admin'
      ? 'Admin'
      : role === 'operator'
        ? 'Operator'
        : role.charAt(0).toUpperCase() + role.slice(1);

/**
 * The signed-in app's frame: a top bar (workspace, user menu), the navigation (a side column; under 760 px a menu
 * button opens it), a skip link, and the page in `<main>`. Items an operator may not use are not drawn.
 */
export function AppShell(props: { children: ComponentChildren }) {
  const session = useSession();
  const place = usePlace();
  const [menuOpen, setMenuOpen] = useState(false);
  const navRoot = useRef<HTMLElement>(null);
  const menuButton = useRef<HTMLButtonElement>(null);
  useDismiss(menuOpen, () => setMenuOpen(false), navRoot, menuButton);
  useEffect(() => setMenuOpen(false), [place.path]);

  const items: NavItem[] = [
    { href: '/agents', label: 'Agents' },
    { href: '/inbox', label: 'Inbox', badge: session.waiting, badgeLabel: 'waiting' },
    { href: '/notifications', label: 'Notifications', badge: session.unread, badgeLabel: 'unread' },
    { href: '/reports', label: 'Reports', adminOnly: true },
    { href: '/builder', label: 'Builder', adminOnly: true },
    { href: '/team', label: 'Team', adminOnly: true },
    { href: '/billing', label: 'Billing', adminOnly: true },
  ];
  const visible = items.filter((item) => !item.adminOnly || session.admin);
  const current = (href: string) => place.path === href || place.path.startsWith(`${href}/`);

  return (
    <div class={`app${menuOpen ? ' app-menu-open' : ''}`}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="menu-button"
          ref={menuButton}
          aria-expanded={menuOpen}
          aria-controls="app-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <span class="menu-icon" aria-hidden="true" />
          <span class="menu-button-label">Menu</span>
          {session.unread + session.waiting > 0 && !menuOpen && (
            <span
              class="nav-badge"
              aria-label={[
                session.waiting > 0 ? `${session.waiting} waiting for a person` : '',
                session.unread > 0 ? `${session.unread} unread notifications` : '',
              ]
                .filter(Boolean)
                .join(', ')}
            >
              {session.unread + session.waiting}
            </span>
          )}
        </button>
        <Brand href={session.admin ? '/agents' : '/inbox'} />
        <span class="workspace-name" title="Workspace">
          {session.me.workspace.name}
        </span>
        <span class="topbar-spacer" />
        <UserMenu />
      </header>
      <nav class="sidenav" id="app-nav" aria-label="Main" ref={navRoot}>
        <ul>
          {visible.map((item) => (
            <li key={item.href}>
              <Link
                class="nav-link"
                href={item.href}
                aria-current={current(item.href) ? 'page' : undefined}
                onNavigate={() => setMenuOpen(false)}
              >
                <span>{item.label}</span>
                {item.badge ? (
                  <span class="nav-badge" data-testid={`nav-badge-${item.label.toLowerCase()}`}>
                    {item.badge}
                    <span class="visually-hidden"> {item.badgeLabel}</span>
                  </span>
                ) : null}
              </Link>
            </li>
          ))}
        </ul>
        <div class="sidenav-footer">
          <Link class="nav-link nav-link-quiet" href="/account" aria-current={current('/account') ? 'page' : undefined}>
            Account
          </Link>
        </div>
      </nav>
      <main class="main" id="main" tabIndex={-1}>
        <EmailBanner />
        {props.children}
      </main>
    </div>
  );
}
