import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { type Role, type SignedIn, isAdmin } from './api/auth';

/**
 * The signed-in user and workspace (`GET /v1/auth/me`), read once when a page that needs a session opens and shared
 * with every page through context, with the shell's unread-notification count.
 */
export interface Session {
  me: SignedIn;
  role: Role;
  /** Owner or admin: may manage agents, keys, triggers, team, billing and the builder. */
  admin: boolean;
  /** Unread notifications, shown in the nav; `refreshUnread` after marking some read. */
  unread: number;
  /** Visitors waiting for a person that nobody has answered yet (the Inbox badge, the title's count). */
  waiting: number;
  refreshUnread: () => void;
  /** Reads `/v1/auth/me` again (after a name or role change). */
  refreshMe: () => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

export const sessionOf = (me: SignedIn, rest: Omit<Session, 'me' | 'role' | 'admin'>): Session => ({
  me,
  role: me.user.role,
  admin: isAdmin(me.user.role),
  ...rest,
});
