import type { Invitation as InvitationSchema } from '../schemas/team';
import { type Queryable, withTransaction } from '../db';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import { hashKey, randomToken } from '../keys';
import { newId } from '../ids';
import { quotedInEmail } from '../outbox';
import type { Role, UserSession } from '../sessions';
import type { z } from 'zod';
import type { InvitationView as InvitationPreview } from '../schemas/auth';
import { countTokenUse } from './abuse';
import type { AccountDeps, LinkBase } from './deps';
import { forbidden, tooMany, unlessEmailTaken } from './errors';
import { signIn } from './sign-in';

/** How long an invitation works (docs/decisions/086-invitations.md). */
const INVITATION_DAYS = 7;

/** A pending invitation, as the team page shows it. */
/** The schema's type (lib/schemas/team.ts): what the route declares is what this returns. */
export type InvitationView = z.infer<typeof InvitationSchema>;

const invitationInvalid = () =>
  new ApiError('not_found', 'This invitation is unknown, already used, revoked or expired');

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
  throw tooMany(`This workspace has sent ${cap} invitations in the last ${over.period}; retry after ${retry} s`, retry);
}

/**
 * Invites a person by e-mail: a link (`{dashboard}/invite#token=…`) e-mailed (or logged without SMTP) and returned
 * to the inviter to pass on. A pending invitation of the same address is replaced. 409 `already_member` when the
 * address has an account in this workspace; 429 past the workspace's invitations per hour or per day; 403 while the
 * inviter has not confirmed their e-mail address.
 */
export async function invite(
  deps: AccountDeps,
  session: UserSession,
  input: { email: string; role: 'admin' | 'operator' },
  linkBase: LinkBase,
): Promise<{ invitation: InvitationView; invite_url: string; emailed: boolean }> {
  const { db } = deps;
  // An unconfirmed sign-up could otherwise mail strangers from thousands of throwaway workspaces: inviting waits
  // for the inviter's own address to be confirmed (docs/decisions/111-signup-verification.md).
  const inviter = await db.query<{ verified: boolean }>(
    `SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1`,
    [session.userId],
  );
  if (!inviter.rows[0]?.verified) {
    throw forbidden(
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
}

export async function revokeInvitation(deps: AccountDeps, session: UserSession, invitationId: string): Promise<void> {
  const res = await deps.db.query(
    `UPDATE invitations SET revoked_at = now()
      WHERE id = $1 AND workspace_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [invitationId, session.workspaceId],
  );
  if (!res.rowCount) throw errors.notFound('No pending invitation with this id');
}

/** What an invitation link shows before it is accepted; 404 when unknown, revoked, used or expired. */
export async function lookUpInvitation(
  deps: AccountDeps,
  token: string,
  client: string,
): Promise<z.infer<typeof InvitationPreview>> {
  await countTokenUse(deps.db, 'invitation', client);
  const res = await deps.db.query<{
    email: string;
    role: z.infer<typeof InvitationPreview>['role'];
    ws_name: string;
    invited_by: string | null;
  }>(
    `SELECT i.email, i.role, w.name AS ws_name, u.email AS invited_by
       FROM invitations i JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`,
    [hashKey(token)],
  );
  const row = res.rows[0];
  if (!row) throw invitationInvalid();
  return { email: row.email, role: row.role, workspace: { name: row.ws_name }, invited_by: row.invited_by };
}

/**
 * Joins the workspace of an invitation as the role it names, with a new password, signed in. An e-mail that has
 * an account already is 409 `email_taken` (an account belongs to one workspace: docs/decisions/084-accounts.md).
 */
export async function acceptInvitation(
  deps: AccountDeps,
  token: string,
  input: { password: string; name?: string },
  client: string,
) {
  const { db } = deps;
  await countTokenUse(db, 'invitation', client);
  const known = await db.query(
    `SELECT 1 FROM invitations
      WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()`,
    [hashKey(token)],
  );
  if (!known.rowCount) throw invitationInvalid();
  const passwordHash = await deps.passwords.hash(input.password);
  const userId = await withTransaction(db, async (tx) => {
    const taken = await tx.query<{ id: string; workspace_id: string; email: string; role: Role }>(
      `UPDATE invitations SET accepted_at = now()
        WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
        RETURNING id, workspace_id, email, role`,
      [hashKey(token)],
    );
    const invitation = taken.rows[0];
    if (!invitation) throw invitationInvalid();
    const id = newId('usr');
    // Verified: the invitation's link went to this address.
    await unlessEmailTaken(
      tx.query(
        `INSERT INTO users (id, workspace_id, email, password_hash, role, name, email_verified_at)
         VALUES ($1, $2, $3, $4, $5, $6, now())`,
        [id, invitation.workspace_id, invitation.email, passwordHash, invitation.role, input.name ?? null],
      ),
    );
    return id;
  });
  return signIn(db, userId);
}
