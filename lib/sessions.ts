import type { Queryable } from './db';
import { constantTimeEqual, hashKey, randomToken } from './keys';

export const SESSION_COOKIE = 'ap_session';

/**
 * The session cookie's name and whether it is Secure: when the API's public address is https, `__Host-ap_session`,
 * always Secure — a browser then keeps it for this host only, path `/`, never sent over plain HTTP nor set by a
 * sibling domain (docs/decisions/042-dashboard-sessions.md). Otherwise (a local set-up on http) `ap_session`, Secure exactly
 * when the request came over https.
 */
export function sessionCookie(publicAddress: string): { name: string; alwaysSecure: boolean } {
  return publicAddress.startsWith('https://')
    ? { name: `__Host-${SESSION_COOKIE}`, alwaysSecure: true }
    : { name: SESSION_COOKIE, alwaysSecure: false };
}
export const SESSION_DAYS = 14;

/** Who may do what in a workspace (docs/decisions/085-roles-and-team.md). */
export type Role = 'owner' | 'admin' | 'operator';

export interface UserSession {
  userId: string;
  workspaceId: string;
  /** Read with the session on every request, so a change of role or a removal takes effect at once. */
  role: Role;
}

/** A dashboard session: a random token in an HttpOnly cookie, stored hashed like every other credential. */
export async function createSession(db: Queryable, userId: string, workspaceId: string): Promise<string> {
  const token = randomToken(40);
  await db.query(
    `INSERT INTO user_sessions (token_hash, user_id, workspace_id, expires_at) VALUES ($1, $2, $3, now() + make_interval(days => $4))`,
    [hashKey(token), userId, workspaceId, SESSION_DAYS],
  );
  return token;
}

export async function findSession(db: Queryable, token: string): Promise<UserSession | null> {
  const hash = hashKey(token);
  // The same round trip notes that the person is using the dashboard (at most every 30 s): the widget tells visitors
  // asking for a person whether anyone is there (lib/widget/service.ts, teamPresence).
  const res = await db.query<{ token_hash: Buffer; user_id: string; workspace_id: string; role: Role }>(
    `WITH found AS (
       SELECT s.token_hash, s.user_id, s.workspace_id, u.role, u.last_active_at
         FROM user_sessions s JOIN users u ON u.id = s.user_id AND u.workspace_id = s.workspace_id
        WHERE s.token_hash = $1 AND s.expires_at > now()
     ), seen AS (
       UPDATE users SET last_active_at = now()
         FROM found
        WHERE users.id = found.user_id
          AND (found.last_active_at IS NULL OR found.last_active_at < now() - interval '30 seconds')
     )
     SELECT token_hash, user_id, workspace_id, role FROM found`,
    [hash],
  );
  const row = res.rows[0];
  if (!row || !constantTimeEqual(row.token_hash, hash)) return null;
  return { userId: row.user_id, workspaceId: row.workspace_id, role: row.role };
}

export async function endSession(db: Queryable, token: string): Promise<void> {
  await db.query(`DELETE FROM user_sessions WHERE token_hash = $1`, [hashKey(token)]);
}

/** Ends every session of a user but the one (if any) whose token is given: after a password change or reset. */
export async function endOtherSessions(db: Queryable, userId: string, keepToken?: string): Promise<void> {
  await db.query(`DELETE FROM user_sessions WHERE user_id = $1 AND ($2::bytea IS NULL OR token_hash <> $2)`, [
    userId,
    keepToken ? hashKey(keepToken) : null,
  ]);
}
