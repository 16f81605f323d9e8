import { type Queryable, withTransaction } from '../db';
import { type RotatedKey, rotateSeenKeys } from '../bots/service';
import { type SeenKey, seenKeyView, seenKeys } from '../bots/exposures';
import type { SecretBox } from '../secret-box';
import type { UserSession } from '../sessions';
import type { AccountDeps } from './deps';
import { forbidden } from './errors';

/** The keys in force a person who left (or lost the admin role) was shown (docs/decisions/142-keys-outlive-holders.md). */
export interface KeysTheySaw {
  /** The keys in force they were shown: to rotate. */
  keys_seen: SeenKey[];
  /** What was rotated at once, by the workspace's setting: the new values, shown only in this answer. */
  rotated_keys: RotatedKey[];
}

/** Whether the workspace rotates the keys a departing person saw at once (`rotate_keys_on_departure`). */
async function rotatesOnDeparture(db: Queryable, workspaceId: string): Promise<boolean> {
  const setting = await db.query<{ rotate: boolean }>(
    `SELECT rotate_keys_on_departure AS rotate FROM workspaces WHERE id = $1`,
    [workspaceId],
  );
  return setting.rows[0]?.rotate ?? false;
}

/**
 * After a person left the team or became an operator (their row already changed, in the caller's transaction): the
 * keys still in force that they were shown — rotated at once when the workspace says so (`rotate_keys_on_departure`),
 * the new values then shown to the person who removed or demoted them; listed to rotate otherwise.
 */
export async function keysTheySaw(
  tx: Queryable,
  box: SecretBox,
  session: UserSession,
  userId: string,
): Promise<KeysTheySaw> {
  if (await rotatesOnDeparture(tx, session.workspaceId)) {
    return { keys_seen: [], rotated_keys: await rotateSeenKeys(tx, box, session.workspaceId, session.userId, userId) };
  }
  return { keys_seen: (await seenKeys(tx, session.workspaceId, userId)).map(seenKeyView), rotated_keys: [] };
}

/**
 * The keys in force that people who left, or are operators now, were shown (owners and admins: the route), and
 * whether the workspace rotates them at once when someone leaves.
 */
export async function listSeenKeys(
  deps: AccountDeps,
  session: UserSession,
): Promise<{ seen_keys: SeenKey[]; rotate_keys_on_departure: boolean }> {
  const [keys, rotate] = await Promise.all([
    seenKeys(deps.db, session.workspaceId),
    rotatesOnDeparture(deps.db, session.workspaceId),
  ]);
  return { seen_keys: keys.map(seenKeyView), rotate_keys_on_departure: rotate };
}

/**
 * Rotates, in one action, every key in force that people who left or are operators now were shown (only
 * `userId`'s when given): the old ones stop at once, the new values are in this answer only. A repeat rotates
 * nothing (it is idempotent).
 */
export async function rotateKeysSeen(
  deps: AccountDeps,
  session: UserSession,
  userId?: string,
): Promise<{ rotated: RotatedKey[] }> {
  const rotated = await withTransaction(deps.db, (tx) =>
    rotateSeenKeys(tx, deps.secrets, session.workspaceId, session.userId, userId),
  );
  return { rotated };
}

/** Whether the keys a departing person saw are rotated at once (the owner decides; default: listed to rotate). */
export async function setRotateOnDeparture(
  deps: AccountDeps,
  session: UserSession,
  rotate: boolean,
): Promise<{ rotate_keys_on_departure: boolean }> {
  if (session.role !== 'owner') throw forbidden("Only the workspace's owner changes this setting");
  await deps.db.query(`UPDATE workspaces SET rotate_keys_on_departure = $2 WHERE id = $1`, [
    session.workspaceId,
    rotate,
  ]);
  return { rotate_keys_on_departure: rotate };
}
