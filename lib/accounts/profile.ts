import type { z } from 'zod';
import type { MeResponse } from '../schemas/auth';
import type { Queryable } from '../db';
import type { Role } from '../sessions';
import { planOf } from '../billing/plans';
import type { AccountDeps } from './deps';
import { sessionExpired } from './errors';

/** The signed-in person and their workspace: the schema's type (`GET /v1/auth/me`, lib/schemas/auth.ts). */
export type SignedInView = z.infer<typeof MeResponse>;

/** The signed-in person and their workspace, as the dashboard's pages show them; 401 when the person is gone. */
export async function viewOf(db: Queryable, userId: string): Promise<SignedInView> {
  const res = await db.query<{
    id: string;
    email: string;
    name: string | null;
    role: Role;
    verified: boolean;
    ws_id: string;
    ws_name: string;
    plan: string;
    month_due: boolean;
  }>(
    `SELECT u.id, u.email, u.name, u.role, u.email_verified_at IS NOT NULL AS verified,
            w.id AS ws_id, w.name AS ws_name, w.plan,
            w.included_credits_through < date_trunc('month', now())::date AS month_due
       FROM users u JOIN workspaces w ON w.id = u.workspace_id WHERE u.id = $1`,
    [userId],
  );
  const row = res.rows[0];
  if (!row) throw sessionExpired();
  // What the owner's confirmation would grant now: the month's included credits, while they wait for it.
  const awaiting = !row.verified && row.role === 'owner' && row.month_due ? planOf(row.plan).monthly_credits : 0;
  return {
    user: { id: row.id, email: row.email, name: row.name, role: row.role, email_verified: row.verified },
    workspace: { id: row.ws_id, name: row.ws_name, credits_awaiting_confirmation: awaiting },
  };
}

/** The signed-in user and their workspace, as the dashboard's pages show them (`GET /v1/auth/me`). */
export const me = (deps: AccountDeps, session: { userId: string }) => viewOf(deps.db, session.userId);

/** Changes the signed-in person's own name (an empty one removes it: teammates then see the e-mail). */
export async function rename(deps: AccountDeps, session: { userId: string }, name: string) {
  await deps.db.query(`UPDATE users SET name = NULLIF($2, '') WHERE id = $1`, [session.userId, name]);
  return viewOf(deps.db, session.userId);
}

/** Renames the workspace (owners and admins: the route checks the role). */
export async function renameWorkspace(
  deps: AccountDeps,
  session: { userId: string; workspaceId: string },
  name: string,
) {
  await deps.db.query(`UPDATE workspaces SET name = $2 WHERE id = $1`, [session.workspaceId, name]);
  return viewOf(deps.db, session.userId);
}
