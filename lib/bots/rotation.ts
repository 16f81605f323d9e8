import { type Db, type Queryable, withTransaction } from '../db';
import { errors } from '../errors';
import { fingerprint, generateKey } from '../keys';
import type { SecretBox } from '../secret-box';
import { type ExposedKind, recordExposure, seenKeys, supersedeExposures } from './exposures';
import { insertApiKey, refuseKeysBeforeConfirmation } from './keys';

export type RotatableKind = 'secret' | 'identity' | 'builder' | 'webhook';

/**
 * Issues a new key of one kind for a bot; the previous one stops working at once (same transaction), as the contract's
 * dashboard calls `/secret` and `/identity-secret` require.
 */
export async function rotateKey(
  db: Db,
  box: SecretBox,
  botId: string,
  kind: RotatableKind,
  /** The signed-in person reissuing, who is shown the new key (null: agentctl). */
  issuedBy: string | null = null,
): Promise<{ key: string; fingerprint: string }> {
  return withTransaction(db, (tx) => rotateKeyIn(tx, box, botId, kind, issuedBy));
}

/** `rotateKey` in the caller's transaction. */
async function rotateKeyIn(
  tx: Queryable,
  box: SecretBox,
  botId: string,
  kind: RotatableKind,
  issuedBy: string | null,
): Promise<{ key: string; fingerprint: string }> {
  const bot = await tx.query<{ workspace_id: string; name: string }>(
    `SELECT workspace_id, name FROM bots WHERE id = $1 FOR UPDATE`,
    [botId],
  );
  if (!bot.rows[0]) throw errors.notFound(`No bot with id ${botId}`);
  const workspaceId = bot.rows[0].workspace_id;
  if (kind === 'secret' || kind === 'builder') {
    // Spec, Authentication rule 5: reissuing the builder key stops every earlier builder key of the workspace at
    // once, the ones connected by pairing or issued by the builder included.
    await tx.query(
      `UPDATE api_keys SET revoked_at = now()
        WHERE kind = $2 AND revoked_at IS NULL AND (bot_id = $1 OR ($2 = 'builder' AND workspace_id = $3))`,
      [botId, kind, workspaceId],
    );
    const { id, key } = await insertApiKey(tx, {
      workspaceId,
      botId,
      kind,
      issuedBy,
      ...(kind === 'builder'
        ? { issuedVia: issuedBy ? 'dashboard' : 'agentctl', label: `Agent ${bot.rows[0].name}` }
        : {}),
    });
    if (issuedBy) {
      await recordExposure(tx, {
        workspaceId,
        botId,
        userId: issuedBy,
        kind,
        fingerprint: fingerprint(key),
        apiKeyId: id,
      });
    }
    return { key, fingerprint: fingerprint(key) };
  }
  await refuseKeysBeforeConfirmation(tx, workspaceId);
  const key = generateKey(kind);
  const column = kind === 'identity' ? 'identity_secret' : 'webhook_secret';
  await tx.query(
    `UPDATE bots SET ${column}_sealed = $2, ${column}_fingerprint = $3, updated_at = now() WHERE id = $1`,
    [botId, box.seal(key), fingerprint(key)],
  );
  await supersedeExposures(tx, botId, kind);
  if (issuedBy) await recordExposure(tx, { workspaceId, botId, userId: issuedBy, kind, fingerprint: fingerprint(key) });
  return { key, fingerprint: fingerprint(key) };
}

/** A key rotated because someone who saw it left: its new value (shown once), or null for a builder key revoked. */
export interface RotatedKey {
  bot_id: string | null;
  bot_name: string | null;
  kind: ExposedKind;
  /** The new key's fingerprint; the revoked one's for a builder key. */
  fingerprint: string;
  key: string | null;
}

/**
 * Rotates every key in force that people who left the team or are operators now were shown (only `userId`'s when
 * given), in the caller's transaction: the old ones stop at once, the new ones are shown to `rotator` (recorded as
 * seen by them). A bot's secret key, identity and webhook secrets are reissued; a builder key they saw is revoked
 * (rather than reissued: reissuing one stops every builder key of the workspace, contract, Authentication rule 5). Keys seen by several
 * people are rotated once. Idempotent: once rotated, nothing they saw is in force, and a repeat rotates nothing.
 */
export async function rotateSeenKeys(
  tx: Queryable,
  box: SecretBox,
  workspaceId: string,
  rotator: string,
  userId?: string,
): Promise<RotatedKey[]> {
  // Rotations of one workspace take turns: the second finds nothing left to rotate.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('rotate-seen-keys|' || $1))`, [workspaceId]);
  const seen = await seenKeys(tx, workspaceId, userId);
  const rotated: RotatedKey[] = [];
  const done = new Set<string>();
  for (const s of seen) {
    const once = s.kind === 'builder' ? `builder|${s.api_key_id}` : `${s.kind}|${s.bot_id}`;
    if (done.has(once)) continue;
    done.add(once);
    if (s.kind === 'builder' || !s.bot_id) {
      await tx.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [s.api_key_id]);
      rotated.push({ bot_id: s.bot_id, bot_name: s.bot_name, kind: s.kind, fingerprint: s.fingerprint, key: null });
      continue;
    }
    const issued = await rotateKeyIn(tx, box, s.bot_id, s.kind, rotator);
    rotated.push({ bot_id: s.bot_id, bot_name: s.bot_name, kind: s.kind, ...issued });
  }
  return rotated;
}

/**
 * Every key of a workspace stops, in the caller's transaction: its API keys are revoked and its agents' signing
 * secrets replaced by new ones nobody is shown (the owner reissues them to see them); public keys stay. For an
 * account whose address was first proved by a password reset: what its earlier, unproven holder was shown does not
 * outlive them (workspaces made before sign-ups had to confirm first). The number of keys that stopped.
 */
export async function replaceWorkspaceKeys(tx: Queryable, box: SecretBox, workspaceId: string): Promise<number> {
  const revoked = await tx.query(
    `UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND revoked_at IS NULL`,
    [workspaceId],
  );
  const bots = await tx.query<{ id: string }>(`SELECT id FROM bots WHERE workspace_id = $1 FOR UPDATE`, [workspaceId]);
  for (const { id } of bots.rows) {
    const webhook = generateKey('webhook');
    const identity = generateKey('identity');
    await tx.query(
      `UPDATE bots SET webhook_secret_sealed = $2, webhook_secret_fingerprint = $3,
                       identity_secret_sealed = $4, identity_secret_fingerprint = $5, updated_at = now()
        WHERE id = $1`,
      [id, box.seal(webhook), fingerprint(webhook), box.seal(identity), fingerprint(identity)],
    );
    await supersedeExposures(tx, id, 'webhook');
    await supersedeExposures(tx, id, 'identity');
  }
  return (revoked.rowCount ?? 0) + 2 * bots.rows.length;
}
