import type { Queryable } from './db';
import { constantTimeEqual, hashKey, randomToken } from './keys';

export const SESSION_COOKIE = 'ap_session';
export const SESSION_DAYS = 14;

export interface UserSession {
  userId: string;
  workspaceId: string;
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
  const res = await db.query<{ token_hash: Buffer; user_id: string; workspace_id: string }>(
    `SELECT token_hash, user_id, workspace_id FROM user_sessions WHERE token_hash = $1 AND expires_at > now()`,
    [hash],
  );
  const row = res.rows[0];
  if (!row || !constantTimeEqual(row.token_hash, hash)) return null;
  return { userId: row.user_id, workspaceId: row.workspace_id };
}

export async function endSession(db: Queryable, token: string): Promise<void> {
  await db.query(`DELETE FROM user_sessions WHERE token_hash = $1`, [hashKey(token)]);
}
