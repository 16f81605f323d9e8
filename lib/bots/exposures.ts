import type { Queryable } from '../db';

/**
 * Who was shown which secret (docs/decisions/142-keys-outlive-holders.md): a person who creates an agent sees its keys, one
 * who reissues a key sees the new one. The record keeps what the secret was — the agent, its kind, its fingerprint,
 * when — never the secret. When the person leaves the team or stops being an admin, the keys they saw that still work
 * are listed and rotated (lib/bots/rotation.ts, `rotateSeenKeys`).
 */
export type ExposedKind = 'secret' | 'identity' | 'webhook' | 'builder';

/**
 * Notes that `userId` was shown a secret, in the caller's transaction. `apiKeyId` for the keys kept in `api_keys`
 * (secret, builder); a bot's signing secrets (identity, webhook) are in force until reissued (`supersedeExposures`).
 */
export async function recordExposure(
  tx: Queryable,
  input: {
    workspaceId: string;
    botId: string | null;
    userId: string;
    kind: ExposedKind;
    fingerprint: string;
    apiKeyId?: string;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO key_exposures (workspace_id, bot_id, user_id, email, kind, api_key_id, fingerprint)
     SELECT $1, $2, u.id, u.email, $4, $5, $6 FROM users u WHERE u.id = $3`,
    [input.workspaceId, input.botId, input.userId, input.kind, input.apiKeyId ?? null, input.fingerprint],
  );
}

/** A bot's identity or webhook secret was reissued: whoever saw the earlier one holds nothing that works. */
export async function supersedeExposures(tx: Queryable, botId: string, kind: 'identity' | 'webhook'): Promise<void> {
  await tx.query(
    `UPDATE key_exposures SET superseded_at = now() WHERE bot_id = $1 AND kind = $2 AND superseded_at IS NULL`,
    [botId, kind],
  );
}

/** A key still in force that someone who is no longer an owner or admin of the workspace was shown. */
export interface SeenKey {
  bot_id: string | null;
  bot_name: string | null;
  kind: ExposedKind;
  /** The fingerprint of the key they saw (the one in force). */
  fingerprint: string;
  shown_at: number;
  seen_by: { id: string; email: string; now: 'removed' | 'operator' };
}

/** With the key's row, for secret and builder keys (what rotating revokes); never shown. */
export type SeenKeyRow = SeenKey & { api_key_id: string | null };

/** What the dashboard is shown of a seen key. */
export const seenKeyView = ({ api_key_id: _, ...key }: SeenKeyRow): SeenKey => key;

/**
 * The keys in force that people who left the team, or are operators now, were shown; only `userId`'s when given.
 * Whoever is an owner or admin today may reissue keys anyway: what they saw is not listed.
 */
export async function seenKeys(db: Queryable, workspaceId: string, userId?: string): Promise<SeenKeyRow[]> {
  const res = await db.query<{
    bot_id: string | null;
    bot_name: string | null;
    kind: ExposedKind;
    fingerprint: string;
    shown_ms: string;
    api_key_id: string | null;
    user_id: string;
    email: string;
    removed: boolean;
  }>(
    `SELECT e.bot_id, b.name AS bot_name, e.kind, e.fingerprint, e.api_key_id, e.user_id, e.email,
            u.id IS NULL AS removed, (extract(epoch FROM e.shown_at) * 1000)::bigint AS shown_ms
       FROM key_exposures e
       LEFT JOIN users u ON u.id = e.user_id AND u.workspace_id = e.workspace_id
       LEFT JOIN bots b ON b.id = e.bot_id
       LEFT JOIN api_keys k ON k.id = e.api_key_id
      WHERE e.workspace_id = $1 AND e.superseded_at IS NULL AND k.revoked_at IS NULL
        AND (u.id IS NULL OR u.role = 'operator')
        AND ($2::text IS NULL OR e.user_id = $2)
      ORDER BY lower(e.email), e.user_id, b.name NULLS FIRST, e.bot_id,
               array_position(ARRAY['secret', 'identity', 'webhook', 'builder'], e.kind), e.id`,
    [workspaceId, userId ?? null],
  );
  return res.rows.map((r) => ({
    bot_id: r.bot_id,
    bot_name: r.bot_name,
    kind: r.kind,
    fingerprint: r.fingerprint,
    shown_at: Number(r.shown_ms),
    api_key_id: r.api_key_id,
    seen_by: { id: r.user_id, email: r.email, now: r.removed ? 'removed' : 'operator' },
  }));
}
