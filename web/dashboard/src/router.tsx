import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * Client-side navigation without a router library: the app draws from `location`, `navigate` pushes a history entry
 * and tells the listeners, and `Link` is a real `<a href>` (middle-click, copy link and open-in-new-tab work) whose
 * plain clicks navigate in place. The API answers the app at every page path, so reloads land on the same page.
 */

export interface Place {
  path: string;
  search: URLSearchParams;
}

const listeners = new Set<() => void>();
let navigations = 0;

function notify() {
  navigations += 1;
  for (const listener of listeners) listener();
}

addEventListener('popstate', notify);

/** How many in-app navigations happened since the page loaded (0: the first page; focus stays where it is). */
export const navigationCount = () => navigations;

function currentPlace(): Place {
  return { path: location.pathname.replace(/\/+$/, '') || '/', search: new URLSearchParams(location.search) };
}

const linkTokens = new Map<string, string>();

/**
 * The token of an e-mailed link (`#token=…`, or `?token=…` in links sent before), taken out of the address bar and the
 * history at once, so it is not left in the browser's history, a bookmark, a screen share or a Referer. Kept for the
 * page's path while the app runs.
 */
export function takeLinkToken(): string | null {
  const path = location.pathname;
  const fromHash = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
  const fromQuery = new URLSearchParams(location.search).get('token');
  const found = fromHash || fromQuery;
  if (found) {
    linkTokens.set(path, found);
    history.replaceState(null, '', path);
  }
  return linkTokens.get(path) ?? null;
}

/** Forgets the link's token for `path` (the person asked for a new link: the page starts without one). */
export function forgetLinkToken(path: string): void {
  linkTokens.delete(path);
}

/** The address the browser shows, for `?next=`. */
export const currentAddress = () => `${location.pathname}${location.search}`;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === currentAddress() && !options.replace) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  scrollTo(0, 0);
  notify();
}

/** Re-renders the caller on every navigation. */
export function usePlace(): Place {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return currentPlace();
}

/** Only addresses of this app are followed after signing in (an open redirect would be a phishing aid). */
export function safeNext(next: string | null | undefined, fallback = '/'): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return fallback;
  return next;
}

export function Link(props: {
  href: string;
  children: ComponentChildren;
  class?: string;
  id?: string;
  title?: string;
  target?: string;
  rel?: string;
  'aria-current'?: 'page' | 'step' | 'location' | 'true';
  'aria-label'?: string;
  'data-testid'?: string;
  onNavigate?: () => void;
}) {
  const { href, onNavigate, ...rest } = props;
  function click(event: MouseEvent) {
    // Modified clicks, other buttons and other targets keep the browser's behaviour (new tab, window, download).
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    if (event.altKey || (rest.target && rest.target !== '_self')) return;
    event.preventDefault();
    onNavigate?.();
    navigate(href);
  }
  return <a {...rest} href={href} onClick={click} />;
}
