import type { Queryable } from '../db';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { fingerprint, generateKey, hashKey } from '../keys';

/**
 * A workspace made by sign-up holds no keys until its owner has confirmed the e-mail address (403 `forbidden`): whoever
 * signed up with an address that is not theirs gets nothing that would outlive the real owner's password reset
 * (docs/decisions/142-keys-outlive-holders.md). Every way a key is issued comes through here: agents, reissues, pairings,
 * the builder's keys. In the caller's transaction.
 */
export async function refuseKeysBeforeConfirmation(tx: Queryable, workspaceId: string): Promise<void> {
  const res = await tx.query(
    `SELECT 1 FROM users WHERE workspace_id = $1 AND role = 'owner' AND email_verified_at IS NULL`,
    [workspaceId],
  );
  if (res.rowCount) {
    throw new ApiError(
      'forbidden',
      'Confirm your e-mail address before agents and keys are made: follow the link we sent you, or ask for a new one',
    );
  }
}

/**
 * Issues an API key: stored as its hash and fingerprint only, the full value returned once. `botId` null is a key of
 * the whole workspace (a builder key from pairing); `issuedVia` says how it came to be (`api_keys.issued_via`).
 * `issuedBy` is the signed-in person who issued it (null for an API call or agentctl): their builder keys are
 * revoked when they leave the team or stop being an admin; `label` names the device or the surface.
 */
export async function insertApiKey(
  tx: Queryable,
  input: {
    workspaceId: string;
    botId: string | null;
    kind: 'secret' | 'builder' | 'access';
    issuedVia?: string;
    issuedBy?: string | null;
    label?: string;
  },
): Promise<{ id: string; key: string }> {
  await refuseKeysBeforeConfirmation(tx, input.workspaceId);
  const id = newId('key');
  const key = generateKey(input.kind);
  await tx.query(
    `INSERT INTO api_keys (id, workspace_id, bot_id, kind, key_hash, fingerprint, issued_via, issued_by, label)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      input.workspaceId,
      input.botId,
      input.kind,
      hashKey(key),
      fingerprint(key),
      input.issuedVia ?? null,
      input.issuedBy ?? null,
      input.label ?? null,
    ],
  );
  return { id, key };
}

/**
 * Revokes the builder keys a person issued in a workspace (they leave the team, or stop being an admin); in the
 * caller's transaction. Returns how many.
 */
export async function revokeBuilderKeysIssuedBy(tx: Queryable, workspaceId: string, userId: string): Promise<number> {
  const res = await tx.query(
    `UPDATE api_keys SET revoked_at = now()
      WHERE workspace_id = $1 AND issued_by = $2 AND kind = 'builder' AND revoked_at IS NULL`,
    [workspaceId, userId],
  );
  return res.rowCount ?? 0;
}
