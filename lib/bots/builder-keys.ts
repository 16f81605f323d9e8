import { withTransaction } from '../db';
import { errors } from '../errors';
import { fingerprint } from '../keys';
import type { BotDeps } from './deps';
import { recordExposure } from './exposures';
import { insertApiKey } from './keys';

/** A builder key of the workspace as the team page lists it: never the key, its fingerprint only. */
export interface BuilderKeyView {
  id: string;
  fingerprint: string;
  /** The device (a paired client's name) or the surface it was issued from. */
  label: string | null;
  /** `pairing`, `builder` (the builder panel), `dashboard` (reissued for an agent), or null (created with an agent). */
  issued_via: string | null;
  /** The agent whose own builder key this is; null for a key of the whole workspace. */
  bot_id: string | null;
  bot_name: string | null;
  /** Who issued it; null when an API call or agentctl did, or for keys older than this record. */
  issued_by: { id: string; email: string; name: string | null } | null;
  created_at: number;
  /** To the minute; null when never used since it was recorded. */
  last_used_at: number | null;
}

/** Who asks, as their session says: the owner sees and revokes every builder key, an admin the ones they issued. */
interface Asker {
  workspaceId: string;
  userId: string;
  role: string;
}

/**
 * A new workspace builder key asked of the builder by a signed-in person (recorded as its issuer): earlier keys
 * keep working (rule 5).
 */
export async function issueBuilderKey(deps: BotDeps, workspaceId: string, issuedBy: string | null): Promise<string> {
  return withTransaction(deps.db, async (tx) => {
    const { id, key } = await insertApiKey(tx, {
      workspaceId,
      botId: null,
      kind: 'builder',
      issuedVia: 'builder',
      issuedBy,
      label: 'Builder panel',
    });
    // The builder shows it to the person who asked for it.
    if (issuedBy) {
      await recordExposure(tx, {
        workspaceId,
        botId: null,
        userId: issuedBy,
        kind: 'builder',
        fingerprint: fingerprint(key),
        apiKeyId: id,
      });
    }
    return key;
  });
}

/**
 * The workspace's builder keys in force, newest first, with who issued each: every key for the owner, the ones
 * they issued themselves for an admin (docs/decisions/106-builder-key-issuers.md).
 */
export async function listBuilderKeys(deps: BotDeps, session: Asker): Promise<BuilderKeyView[]> {
  const res = await deps.db.query<
    Pick<BuilderKeyView, 'id' | 'fingerprint' | 'label' | 'issued_via' | 'bot_id' | 'bot_name'> & {
      user_id: string | null;
      email: string | null;
      user_name: string | null;
      created_ms: string;
      used_ms: string | null;
    }
  >(
    `SELECT k.id, k.fingerprint, k.label, k.issued_via, k.bot_id, b.name AS bot_name,
            u.id AS user_id, u.email, u.name AS user_name,
            (extract(epoch FROM k.created_at) * 1000)::bigint AS created_ms,
            (extract(epoch FROM k.last_used_at) * 1000)::bigint AS used_ms
       FROM api_keys k LEFT JOIN bots b ON b.id = k.bot_id LEFT JOIN users u ON u.id = k.issued_by
      WHERE k.workspace_id = $1 AND k.kind = 'builder' AND k.revoked_at IS NULL
        AND ($2::text IS NULL OR k.issued_by = $2)
      ORDER BY k.created_at DESC, k.id`,
    [session.workspaceId, session.role === 'owner' ? null : session.userId],
  );
  return res.rows.map((r) => ({
    id: r.id,
    fingerprint: r.fingerprint,
    label: r.label,
    issued_via: r.issued_via,
    bot_id: r.bot_id,
    bot_name: r.bot_name,
    issued_by: r.user_id ? { id: r.user_id, email: r.email!, name: r.user_name } : null,
    created_at: Number(r.created_ms),
    last_used_at: r.used_ms === null ? null : Number(r.used_ms),
  }));
}

/**
 * Revokes one builder key: the owner any of the workspace's, an admin the ones they issued. Any other key is 404
 * (as the list does not show it).
 */
export async function revokeBuilderKey(deps: BotDeps, session: Asker, keyId: string): Promise<void> {
  const res = await deps.db.query(
    `UPDATE api_keys SET revoked_at = now()
      WHERE id = $1 AND workspace_id = $2 AND kind = 'builder' AND revoked_at IS NULL
        AND ($3::text IS NULL OR issued_by = $3)`,
    [keyId, session.workspaceId, session.role === 'owner' ? null : session.userId],
  );
  if (!res.rowCount) throw errors.notFound('No builder key in force with this id that you may revoke');
}

/** Revokes every builder key of the workspace, the asking one included (rule 5: asking to revoke revokes all). */
export async function revokeBuilderKeys(deps: BotDeps, workspaceId: string): Promise<number> {
  const res = await deps.db.query(
    `UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND kind = 'builder' AND revoked_at IS NULL`,
    [workspaceId],
  );
  return res.rowCount ?? 0;
}
