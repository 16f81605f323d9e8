import type { Session } from './api';

/**
 * The conversation outlives the page: `localStorage["ap-widget:<pk>"]` holds the session id and its visitor token,
 * per bot key, on the host page's origin. Storage can be unavailable (private modes, sandboxed frames, a full quota):
 * then the conversation lasts as long as the page.
 */
const storageKey = (publicKey: string) => `ap-widget:${publicKey}`;

export function loadSession(publicKey: string): Session | null {
  try {
    const raw = localStorage.getItem(storageKey(publicKey));
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<Session>;
    if (typeof parsed.session_id === 'string' && typeof parsed.visitor_token === 'string') {
      return { session_id: parsed.session_id, visitor_token: parsed.visitor_token };
    }
  } catch {
    // unreadable or unavailable: a new conversation
  }
  return null;
}

export function saveSession(publicKey: string, session: Session): void {
  try {
    localStorage.setItem(storageKey(publicKey), JSON.stringify(session));
  } catch {
    // unavailable: the session lives in memory only
  }
}

export function forgetSession(publicKey: string): void {
  try {
    localStorage.removeItem(storageKey(publicKey));
  } catch {
    // nothing stored
  }
}
