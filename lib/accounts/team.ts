import type { z } from 'zod';
import type { Member as MemberSchema } from '../schemas/team';
import { type Db, type Queryable, withTransaction } from '../db';
import { revokeBuilderKeysIssuedBy } from '../bots/service';
import { errors } from '../errors';
import type { Role, UserSession } from '../sessions';
import type { AccountDeps } from './deps';
import { forbidden } from './errors';
import type { InvitationView } from './invitations';
import { type KeysTheySaw, keysTheySaw } from './seen-keys';

/** What the team page shows of a member. */
/** The schema's type (lib/schemas/team.ts): what the route declares is what this returns. */
export type MemberView = z.infer<typeof MemberSchema>;

/** What a person's leaving (or losing the admin role) took with it; added to the removal's and role change's answers. */
export interface Revoked extends KeysTheySaw {
  revoked_builder_keys: number;
  revoked_invitations: number;
}

const NOTHING_REVOKED: Revoked = { revoked_builder_keys: 0, revoked_invitations: 0, keys_seen: [], rotated_keys: [] };

/**
 * What a person may no longer hold once they leave the team or stop being an admin: the builder keys they issued
 * (panel, pairing, reissues) and the invitations they sent that are still pending. In the caller's transaction.
 */
async function revokeWhatTheyIssued(
  tx: Queryable,
  workspaceId: string,
  userId: string,
): Promise<Pick<Revoked, 'revoked_builder_keys' | 'revoked_invitations'>> {
  const keys = await revokeBuilderKeysIssuedBy(tx, workspaceId, userId);
  const invitations = await tx.query(
    `UPDATE invitations SET revoked_at = now()
      WHERE workspace_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [workspaceId, userId],
  );
  return { revoked_builder_keys: keys, revoked_invitations: invitations.rowCount ?? 0 };
}

async function memberOf(db: Db, workspaceId: string, userId: string): Promise<{ id: string; role: Role }> {
  const res = await db.query<{ id: string; role: Role }>(
    `SELECT id, role FROM users WHERE id = $1 AND workspace_id = $2`,
    [userId, workspaceId],
  );
  if (!res.rows[0]) throw errors.notFound('No such member in your workspace');
  return res.rows[0];
}

/** The team page: the members (the owner, then admins, then operators, each by e-mail) and pending invitations. */
export async function listTeam(
  deps: AccountDeps,
  session: UserSession,
): Promise<{ members: MemberView[]; invitations: InvitationView[] }> {
  const { db } = deps;
  const [members, invitations] = await Promise.all([
    db.query<{ id: string; email: string; name: string | null; role: Role; created_ms: string }>(
      `SELECT id, email, name, role, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
         FROM users WHERE workspace_id = $1
        ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, lower(email)`,
      [session.workspaceId],
    ),
    db.query<{
      id: string;
      email: string;
      role: 'admin' | 'operator';
      created_ms: string;
      expires_ms: string;
      invited_by: string | null;
    }>(
      `SELECT i.id, i.email, i.role, u.email AS invited_by,
              (extract(epoch FROM i.created_at) * 1000)::bigint AS created_ms,
              (extract(epoch FROM i.expires_at) * 1000)::bigint AS expires_ms
         FROM invitations i LEFT JOIN users u ON u.id = i.invited_by
        WHERE i.workspace_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
        ORDER BY i.created_at DESC`,
      [session.workspaceId],
    ),
  ]);
  return {
    members: members.rows.map(({ created_ms, ...m }) => ({
      ...m,
      created_at: Number(created_ms),
      you: m.id === session.userId,
    })),
    invitations: invitations.rows.map(({ created_ms, expires_ms, ...i }) => ({
      ...i,
      created_at: Number(created_ms),
      expires_at: Number(expires_ms),
    })),
  };
}

/**
 * The owner changes a member's role (admin or operator); the owner's own role does not change this way. An admin
 * made an operator loses the builder keys and pending invitations they issued (an operator could not issue them).
 */
export async function changeRole(
  deps: AccountDeps,
  session: UserSession,
  userId: string,
  role: 'admin' | 'operator',
): Promise<MemberView & Revoked> {
  if (session.role !== 'owner') throw forbidden("Only the workspace's owner changes roles");
  const member = await memberOf(deps.db, session.workspaceId, userId);
  if (member.role === 'owner') throw forbidden("The owner's role cannot be changed");
  const revoked = await withTransaction(deps.db, async (tx): Promise<Revoked> => {
    await tx.query(`UPDATE users SET role = $2 WHERE id = $1`, [userId, role]);
    if (role !== 'operator') return NOTHING_REVOKED;
    return {
      ...(await revokeWhatTheyIssued(tx, session.workspaceId, userId)),
      ...(await keysTheySaw(tx, deps.secrets, session, userId)),
    };
  });
  const list = await listTeam(deps, session);
  return { ...list.members.find((m) => m.id === userId)!, ...revoked };
}

/**
 * Removes a member: their account and sessions end at once. The owner removes anyone but themself; an admin removes
 * operators (admins are the owner's to remove, as roles are the owner's to give).
 */
export async function removeMember(deps: AccountDeps, session: UserSession, userId: string): Promise<Revoked> {
  if (userId === session.userId) throw forbidden('You cannot remove yourself');
  const member = await memberOf(deps.db, session.workspaceId, userId);
  if (member.role === 'owner') throw forbidden("The workspace's owner cannot be removed");
  if (member.role === 'admin' && session.role !== 'owner') throw forbidden("Only the workspace's owner removes admins");
  // Their builder keys and pending invitations go in the same transaction as the account: nothing they issued
  // outlives them (the references would only be set to NULL).
  return withTransaction(deps.db, async (tx) => {
    const revoked = await revokeWhatTheyIssued(tx, session.workspaceId, userId);
    await tx.query(`DELETE FROM users WHERE id = $1 AND workspace_id = $2`, [userId, session.workspaceId]);
    return { ...revoked, ...(await keysTheySaw(tx, deps.secrets, session, userId)) };
  });
}
