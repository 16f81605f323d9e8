import { type Db, type Queryable, withTransaction } from '../db';
import { type RotatedKey, revokeBuilderKeysIssuedBy, rotateSeenKeys } from '../bots/service';
import { type SeenKey, seenKeyView, seenKeys } from '../bots/exposures';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import { hashKey, randomToken } from '../keys';
import { newId } from '../ids';
import { type Outbox, quotedInEmail } from '../outbox';
import type { SecretBox } from '../secret-box';
import type { Role, UserSession } from '../sessions';
import { INVITATION_DAYS, type LinkBase } from './service';

/** What the team page shows of a member. */
export interface MemberView {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  created_at: number;
  you: boolean;
}

export interface InvitationView {
  id: string;
  email: string;
  role: 'admin' | 'operator';
  created_at: number;
  expires_at: number;
  invited_by: string | null;
}

const forbidden = (message: string) => new ApiError('forbidden', message);

/** What a person's leaving (or losing the admin role) took with it; added to the removal's and role change's answers. */
export interface Revoked {
  revoked_builder_keys: number;
  revoked_invitations: number;
  /** The keys in force they were shown (docs/decisions/keys-outlive-holders.md): to rotate. */
  keys_seen: SeenKey[];
  /** What was rotated at once, by the workspace's setting: the new values, shown only in this answer. */
  rotated_keys: RotatedKey[];
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

/**
 * After a person left the team or became an operator (their row already changed, in the caller's transaction): the
 * keys still in force that they were shown — rotated at once when the workspace says so (`rotate_keys_on_departure`),
 * the new values then shown to the person who removed or demoted them; listed to rotate otherwise.
 */
async function keysTheySaw(
  tx: Queryable,
  box: SecretBox,
  session: UserSession,
  userId: string,
): Promise<Pick<Revoked, 'keys_seen' | 'rotated_keys'>> {
  const setting = await tx.query<{ rotate: boolean }>(
    `SELECT rotate_keys_on_departure AS rotate FROM workspaces WHERE id = $1`,
    [session.workspaceId],
  );
  if (setting.rows[0]?.rotate) {
    return { keys_seen: [], rotated_keys: await rotateSeenKeys(tx, box, session.workspaceId, session.userId, userId) };
  }
  return { keys_seen: (await seenKeys(tx, session.workspaceId, userId)).map(seenKeyView), rotated_keys: [] };
}

/**
 * Invitations e-mail people who never asked for them, so a workspace sends a bounded number: per hour and per day,
 * revoked ones included (revoking does not buy more). 429 `rate_limited` with `Retry-After` until the oldest one in the
 * exceeded period leaves it.
 */
async function refuseOverInvitationLimits(tx: Queryable, workspaceId: string): Promise<void> {
  const res = await tx.query<{ period: string; count: number; retry: number }>(
    `SELECT p.period, count(i.id)::int AS count,
            COALESCE(ceil(extract(epoch FROM min(i.created_at) + p.span - now())), 1)::int AS retry
       FROM (VALUES ('hour', interval '1 hour', $2::int), ('day', interval '1 day', $3::int)) AS p(period, span, cap)
       LEFT JOIN invitations i ON i.workspace_id = $1 AND i.created_at > now() - p.span
      GROUP BY p.period, p.span, p.cap
     HAVING count(i.id) >= p.cap`,
    [workspaceId, LIMITS.account.invitationsPerHour, LIMITS.account.invitationsPerDay],
  );
  if (!res.rows.length) return;
  const retry = Math.max(1, ...res.rows.map((r) => r.retry));
  const over = res.rows.find((r) => r.period === 'day') ?? res.rows[0];
  const cap = over.period === 'day' ? LIMITS.account.invitationsPerDay : LIMITS.account.invitationsPerHour;
  throw new ApiError(
    'rate_limited',
    `This workspace has sent ${cap} invitations in the last ${over.period}; retry after ${retry} s`,
    {},
    { 'Retry-After': String(retry) },
  );
}

/**
 * A workspace's people (docs/decisions/085-roles-and-team.md): members with roles, invitations by e-mail link, role changes and
 * removals. Who may do what beyond the route's roles is decided here: an admin invites admins and operators and
 * removes operators; only the owner changes roles and removes admins; nobody removes the owner or themself. A person
 * removed, or an admin made an operator, loses the builder keys and pending invitations they issued.
 */
export function createTeamService(deps: { db: Db; outbox: Outbox; secrets: SecretBox }) {
  const { db } = deps;

  async function memberOf(workspaceId: string, userId: string): Promise<{ id: string; role: Role }> {
    const res = await db.query<{ id: string; role: Role }>(
      `SELECT id, role FROM users WHERE id = $1 AND workspace_id = $2`,
      [userId, workspaceId],
    );
    if (!res.rows[0]) throw errors.notFound('No such member in your workspace');
    return res.rows[0];
  }

  const service = {
    async list(session: UserSession): Promise<{ members: MemberView[]; invitations: InvitationView[] }> {
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
    },

    /**
     * Invites a person by e-mail: a link (`{dashboard}/invite#token=…`) e-mailed (or logged without SMTP) and returned
     * to the inviter to pass on. A pending invitation of the same address is replaced. 409 `already_member` when the
     * address has an account in this workspace; 429 past the workspace's invitations per hour or per day; 403 while the
     * inviter has not confirmed their e-mail address.
     */
    async invite(
      session: UserSession,
      input: { email: string; role: 'admin' | 'operator' },
      linkBase: LinkBase,
    ): Promise<{ invitation: InvitationView; invite_url: string; emailed: boolean }> {
      // An unconfirmed sign-up could otherwise mail strangers from thousands of throwaway workspaces: inviting waits
      // for the inviter's own address to be confirmed (docs/decisions/111-signup-verification.md).
      const inviter = await db.query<{ verified: boolean }>(
        `SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1`,
        [session.userId],
      );
      if (!inviter.rows[0]?.verified) {
        throw new ApiError(
          'forbidden',
          'Confirm your e-mail address before inviting people: follow the link we sent you, or ask for a new one',
        );
      }
      const email = input.email.trim();
      const member = await db.query(`SELECT 1 FROM users WHERE workspace_id = $1 AND lower(email) = lower($2)`, [
        session.workspaceId,
        email,
      ]);
      if (member.rowCount) throw new ApiError('already_member', `${email} is already a member of this workspace`);
      const token = randomToken(40);
      const id = newId('inv');
      const res = await withTransaction(db, async (tx) => {
        // One invitation at a time per workspace, so invitations sent at once are all counted.
        await tx.query(`SELECT pg_advisory_xact_lock(hashtext('invitations|' || $1))`, [session.workspaceId]);
        await refuseOverInvitationLimits(tx, session.workspaceId);
        await tx.query(
          `UPDATE invitations SET revoked_at = now()
            WHERE workspace_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND revoked_at IS NULL`,
          [session.workspaceId, email],
        );
        return tx.query<{ created_ms: string; expires_ms: string; workspace: string; inviter: string }>(
          `WITH i AS (INSERT INTO invitations (id, workspace_id, email, role, token_hash, invited_by, expires_at)
                      VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7)) RETURNING *)
           SELECT (extract(epoch FROM i.created_at) * 1000)::bigint AS created_ms,
                  (extract(epoch FROM i.expires_at) * 1000)::bigint AS expires_ms,
                  w.name AS workspace, u.email AS inviter
             FROM i JOIN workspaces w ON w.id = i.workspace_id JOIN users u ON u.id = i.invited_by`,
          [id, session.workspaceId, email, input.role, hashKey(token), session.userId, INVITATION_DAYS],
        );
      });
      const row = res.rows[0];
      // The token rides in the fragment: it never reaches a server's access log, nor a Referer (the page reads it).
      const url = `${linkBase}/invite#token=${token}`;
      // The subject is ours alone: the workspace's name is the inviter's text, and a subject is what a phishing
      // message would want to control. In the text the name is quoted as theirs, on one line, its addresses defused.
      const sent = await deps.outbox.send(
        email,
        "You're invited to a workspace on Agent Platform",
        `You are invited to the workspace “${quotedInEmail(row.workspace)}” on Agent Platform, as ` +
          `${input.role === 'admin' ? 'an admin' : 'an operator'}, by ${row.inviter}.\n` +
          "(The workspace's name in quotation marks was chosen by its owner, not by Agent Platform.)\n\n" +
          `Accept the invitation here (the link works once, for ${INVITATION_DAYS} days):\n${url}\n`,
      );
      return {
        invitation: {
          id,
          email,
          role: input.role,
          created_at: Number(row.created_ms),
          expires_at: Number(row.expires_ms),
          invited_by: row.inviter,
        },
        invite_url: url,
        emailed: sent.delivered,
      };
    },

    async revokeInvitation(session: UserSession, invitationId: string): Promise<void> {
      const res = await db.query(
        `UPDATE invitations SET revoked_at = now()
          WHERE id = $1 AND workspace_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
        [invitationId, session.workspaceId],
      );
      if (!res.rowCount) throw errors.notFound('No pending invitation with this id');
    },

    /**
     * The owner changes a member's role (admin or operator); the owner's own role does not change this way. An admin
     * made an operator loses the builder keys and pending invitations they issued (an operator could not issue them).
     */
    async changeRole(session: UserSession, userId: string, role: 'admin' | 'operator'): Promise<MemberView & Revoked> {
      if (session.role !== 'owner') throw forbidden("Only the workspace's owner changes roles");
      const member = await memberOf(session.workspaceId, userId);
      if (member.role === 'owner') throw forbidden("The owner's role cannot be changed");
      const revoked = await withTransaction(db, async (tx): Promise<Revoked> => {
        await tx.query(`UPDATE users SET role = $2 WHERE id = $1`, [userId, role]);
        if (role !== 'operator') return NOTHING_REVOKED;
        return {
          ...(await revokeWhatTheyIssued(tx, session.workspaceId, userId)),
          ...(await keysTheySaw(tx, deps.secrets, session, userId)),
        };
      });
      const list = await service.list(session);
      return { ...list.members.find((m) => m.id === userId)!, ...revoked };
    },

    /**
     * Removes a member: their account and sessions end at once. The owner removes anyone but themself; an admin removes
     * operators (admins are the owner's to remove, as roles are the owner's to give).
     */
    async remove(session: UserSession, userId: string): Promise<Revoked> {
      if (userId === session.userId) throw forbidden('You cannot remove yourself');
      const member = await memberOf(session.workspaceId, userId);
      if (member.role === 'owner') throw forbidden("The workspace's owner cannot be removed");
      if (member.role === 'admin' && session.role !== 'owner')
        throw forbidden("Only the workspace's owner removes admins");
      // Their builder keys and pending invitations go in the same transaction as the account: nothing they issued
      // outlives them (the references would only be set to NULL).
      return withTransaction(db, async (tx) => {
        const revoked = await revokeWhatTheyIssued(tx, session.workspaceId, userId);
        await tx.query(`DELETE FROM users WHERE id = $1 AND workspace_id = $2`, [userId, session.workspaceId]);
        return { ...revoked, ...(await keysTheySaw(tx, deps.secrets, session, userId)) };
      });
    },

    /**
     * The keys in force that people who left, or are operators now, were shown (owners and admins: the route), and
     * whether the workspace rotates them at once when someone leaves.
     */
    async seenKeys(session: UserSession): Promise<{ seen_keys: SeenKey[]; rotate_keys_on_departure: boolean }> {
      const [keys, setting] = await Promise.all([
        seenKeys(db, session.workspaceId),
        db.query<{ rotate: boolean }>(`SELECT rotate_keys_on_departure AS rotate FROM workspaces WHERE id = $1`, [
          session.workspaceId,
        ]),
      ]);
      return { seen_keys: keys.map(seenKeyView), rotate_keys_on_departure: setting.rows[0]?.rotate ?? false };
    },

    /**
     * Rotates, in one action, every key in force that people who left or are operators now were shown (only
     * `userId`'s when given): the old ones stop at once, the new values are in this answer only. A repeat rotates
     * nothing (it is idempotent).
     */
    async rotateSeenKeys(session: UserSession, userId?: string): Promise<{ rotated: RotatedKey[] }> {
      const rotated = await withTransaction(db, (tx) =>
        rotateSeenKeys(tx, deps.secrets, session.workspaceId, session.userId, userId),
      );
      return { rotated };
    },

    /** Whether the keys a departing person saw are rotated at once (the owner decides; default: listed to rotate). */
    async setRotateOnDeparture(session: UserSession, rotate: boolean): Promise<{ rotate_keys_on_departure: boolean }> {
      if (session.role !== 'owner') throw forbidden("Only the workspace's owner changes this setting");
      await db.query(`UPDATE workspaces SET rotate_keys_on_departure = $2 WHERE id = $1`, [
        session.workspaceId,
        rotate,
      ]);
      return { rotate_keys_on_departure: rotate };
    },
  };
  return service;
}

export type TeamService = ReturnType<typeof createTeamService>;
