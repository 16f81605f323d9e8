import type { Db, DbClient, Queryable } from '../db';
import { withTransaction } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { fingerprint, generateKey, hashKey } from '../keys';
import type { SecretBox } from '../secret-box';
import type { ModelCatalogue, ModelChoice } from '../billing/models';
import { type AgentState, readState, writeState } from './state';
import type { WhenUnanswered } from '../../workflows/contracts/agent-run';
import type { BusinessHours } from './hours';
import { type ExposedKind, recordExposure, seenKeys, supersedeExposures } from './exposures';

/** Every key of a new bot, shown once at creation; afterwards only fingerprints are known. */
export interface BotKeys {
  secret_key: string;
  public_key: string;
  builder_key: string;
  handoff_webhook_secret: string;
  visitor_identity_secret: string;
}

export async function createBot(
  tx: DbClient | Queryable,
  box: SecretBox,
  input: { workspaceId: string; name: string; instructions?: string; issuedBy?: string | null },
): Promise<{ botId: string; keys: BotKeys }> {
  await refuseKeysBeforeConfirmation(tx, input.workspaceId);
  const botId = newId('bot');
  const publicKey = generateKey('public');
  const webhookSecret = generateKey('webhook');
  const identitySecret = generateKey('identity');
  await tx.query(
    `INSERT INTO bots (id, workspace_id, name, instructions, public_key,
                       webhook_secret_sealed, webhook_secret_fingerprint, identity_secret_sealed, identity_secret_fingerprint)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      botId,
      input.workspaceId,
      input.name,
      input.instructions ?? '',
      publicKey,
      box.seal(webhookSecret),
      fingerprint(webhookSecret),
      box.seal(identitySecret),
      fingerprint(identitySecret),
    ],
  );
  const issued = { workspaceId: input.workspaceId, botId, issuedBy: input.issuedBy ?? null };
  const secret = await insertApiKey(tx, { ...issued, kind: 'secret' });
  const builder = await insertApiKey(tx, { ...issued, kind: 'builder', label: `Agent ${input.name}` });
  const { key: secretKey } = secret;
  const { key: builderKey } = builder;
  // Everything in this answer is shown to the person creating the agent.
  if (input.issuedBy) {
    const shown = { workspaceId: input.workspaceId, botId, userId: input.issuedBy };
    await recordExposure(tx, { ...shown, kind: 'secret', fingerprint: fingerprint(secretKey), apiKeyId: secret.id });
    await recordExposure(tx, { ...shown, kind: 'builder', fingerprint: fingerprint(builderKey), apiKeyId: builder.id });
    await recordExposure(tx, { ...shown, kind: 'webhook', fingerprint: fingerprint(webhookSecret) });
    await recordExposure(tx, { ...shown, kind: 'identity', fingerprint: fingerprint(identitySecret) });
  }
  return {
    botId,
    keys: {
      secret_key: secretKey,
      public_key: publicKey,
      builder_key: builderKey,
      handoff_webhook_secret: webhookSecret,
      visitor_identity_secret: identitySecret,
    },
  };
}

/**
 * A workspace made by sign-up holds no keys until its owner has confirmed the e-mail address (403 `forbidden`): whoever
 * signed up with an address that is not theirs gets nothing that would outlive the real owner's password reset
 * (docs/decisions/keys-outlive-holders.md). Every way a key is issued comes through here: agents, reissues, pairings,
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

export type RotatableKind = 'secret' | 'identity' | 'builder' | 'webhook';

/**
 * Issues a new key of one kind for a bot; the previous one stops working at once (same transaction), as the spec's
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
 * (rather than reissued: reissuing one stops every builder key of the workspace, spec rule 5). Keys seen by several
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

/** What the dashboard shows of a bot: its settings, the public key and the fingerprints of its secrets. */
const BOT_COLUMNS = `id, name, instructions, model, handoff_enabled, when_unanswered, business_hours, handoff_webhook_url, allowed_origins, public_key,
  webhook_secret_fingerprint AS handoff_webhook_secret_fingerprint, identity_secret_fingerprint AS visitor_identity_secret_fingerprint,
  (SELECT k.fingerprint FROM api_keys k WHERE k.bot_id = bots.id AND k.kind = 'secret' AND k.revoked_at IS NULL
    ORDER BY k.created_at DESC LIMIT 1) AS secret_key_fingerprint,
  (SELECT k.fingerprint FROM api_keys k WHERE k.bot_id = bots.id AND k.kind = 'builder' AND k.revoked_at IS NULL
    ORDER BY k.created_at DESC LIMIT 1) AS builder_key_fingerprint,
  widget_look, (extract(epoch FROM created_at) * 1000)::bigint AS created_at`;

/** How the widget looks (docs/widget.md, "Its look"); what the owner did not set has its default. */
export interface WidgetLook {
  /** The accent colour, `#rrggbb`: the launcher, the header, the visitor's bubbles, buttons. */
  color: string;
  /** The first words a visitor reads in an empty chat; null: the widget's own. */
  greeting: string | null;
  /** Which bottom corner the launcher sits in. */
  position: 'right' | 'left';
  /** Who a person's reply is from ("From Acme support"); null: "the team". */
  team_name: string | null;
  /** An https image shown beside the agent's name. */
  avatar_url: string | null;
}

export const DEFAULT_WIDGET_LOOK: WidgetLook = {
  color: '#4f46e5',
  greeting: null,
  position: 'right',
  team_name: null,
  avatar_url: null,
};

export const widgetLookOf = (stored: Partial<WidgetLook> | null | undefined): WidgetLook => ({
  ...DEFAULT_WIDGET_LOOK,
  ...Object.fromEntries(Object.entries(stored ?? {}).filter(([, v]) => v !== null && v !== undefined)),
});

export interface BotView {
  id: string;
  name: string;
  instructions: string;
  model: string | null;
  handoff_enabled: boolean;
  /** With handoff on, what the agent does when it cannot answer from its knowledge: offer a person, or hand over. */
  when_unanswered: WhenUnanswered;
  /** When the team answers handed-over conversations; null: always (lib/bots/hours.ts). */
  business_hours: BusinessHours | null;
  handoff_webhook_url: string | null;
  /** Origins whose pages may use the widget (CORS on `/v1/widget/*`). */
  allowed_origins: string[];
  public_key: string;
  handoff_webhook_secret_fingerprint: string;
  visitor_identity_secret_fingerprint: string;
  secret_key_fingerprint: string | null;
  /** The bot's own builder key (keys of the whole workspace, from pairing or the builder, are not shown here). */
  builder_key_fingerprint: string | null;
  widget_look: WidgetLook;
  created_at: number;
}

/** A bot in the dashboard's list. */
export interface BotSummary {
  id: string;
  name: string;
  created_at: number;
  knowledge_sources: number;
  open_requests: number;
}

const viewOf = (row: BotView): BotView => ({
  ...row,
  widget_look: widgetLookOf(row.widget_look),
  created_at: Number(row.created_at),
});

export interface BotSettings {
  name?: string;
  instructions?: string;
  model?: string | null;
  handoff_enabled?: boolean;
  when_unanswered?: WhenUnanswered;
  business_hours?: BusinessHours | null;
  handoff_webhook_url?: string | null;
  allowed_origins?: string[];
  /** Merged into what is set; a field set to null goes back to its default. */
  widget_look?: Partial<{ [K in keyof WidgetLook]: WidgetLook[K] | null }>;
}

const SETTINGS: (keyof BotSettings)[] = [
  'name',
  'instructions',
  'model',
  'handoff_enabled',
  'when_unanswered',
  'business_hours',
  'handoff_webhook_url',
  'allowed_origins',
];

/**
 * Bots and their keys (spec, Dashboard calls named as public for key handling): reading and changing an agent's
 * settings, issuing keys, and its state document. Every surface that acts for a workspace's member reaches a bot
 * through `findInWorkspace`, which answers 404 for another workspace's bot (never 403: nothing leaks).
 */
export function createBotService(deps: {
  db: Db;
  secrets: SecretBox;
  /** The models agents may use on each plan (lib/billing/models.ts). */
  models: ModelCatalogue;
  /** What other resources hold of a bot outside Postgres's cascades (Schedules, running scans, files in a bucket). */
  beforeDelete: (botId: string) => Promise<void>;
}) {
  return {
    /** The workspace's bots, oldest first, with what the list shows of each. */
    async list(workspaceId: string): Promise<BotSummary[]> {
      const res = await deps.db.query<{
        id: string;
        name: string;
        created_ms: string;
        knowledge_sources: number;
        open_requests: number;
      }>(
        `SELECT b.id, b.name, (extract(epoch FROM b.created_at) * 1000)::bigint AS created_ms,
                (SELECT count(*)::int FROM knowledge_sources s WHERE s.bot_id = b.id) AS knowledge_sources,
                (SELECT count(*)::int FROM conversations c
                  WHERE c.bot_id = b.id AND c.status IN ('waiting', 'operator')) AS open_requests
           FROM bots b WHERE b.workspace_id = $1 ORDER BY b.created_at, b.id`,
        [workspaceId],
      );
      return res.rows.map(({ created_ms, ...b }) => ({ ...b, created_at: Number(created_ms) }));
    },

    /** A new bot with every key, shown in full in this answer only. */
    async create(
      workspaceId: string,
      input: { name: string; instructions?: string },
      issuedBy: string | null = null,
    ): Promise<{ bot: BotView; keys: BotKeys }> {
      const { botId, keys } = await withTransaction(deps.db, (tx) =>
        createBot(tx, deps.secrets, { workspaceId, name: input.name, instructions: input.instructions, issuedBy }),
      );
      const res = await deps.db.query<BotView>(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [botId]);
      return { bot: viewOf(res.rows[0]), keys };
    },

    /**
     * Deletes a bot and everything of it: its triggers' Schedules, its scans, its files first (they live outside the
     * database), then the rows (keys, conversations, knowledge, runs go with it by cascade). Its keys stop at once.
     */
    async remove(botId: string): Promise<void> {
      await deps.beforeDelete(botId);
      const res = await deps.db.query(`DELETE FROM bots WHERE id = $1`, [botId]);
      if (!res.rowCount) throw errors.notFound('No such bot');
    },

    /** The models the workspace's plan allows (the agent settings' choice) and the platform's default. */
    async modelChoices(workspaceId: string): Promise<{ default_model: string; plan: string; models: ModelChoice[] }> {
      const res = await deps.db.query<{ plan: string }>(`SELECT plan FROM workspaces WHERE id = $1`, [workspaceId]);
      const plan = res.rows[0]?.plan ?? 'free';
      return { default_model: deps.models.defaultModel, plan, models: deps.models.choicesFor(plan) };
    },

    async findInWorkspace(workspaceId: string, botId: string): Promise<{ id: string; workspace_id: string }> {
      const res = await deps.db.query<{ id: string; workspace_id: string }>(
        `SELECT id, workspace_id FROM bots WHERE id = $1 AND workspace_id = $2`,
        [botId, workspaceId],
      );
      if (!res.rows[0]) throw errors.notFound('No such bot in your workspace');
      return res.rows[0];
    },

    async get(botId: string): Promise<BotView> {
      const res = await deps.db.query<BotView>(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [botId]);
      if (!res.rows[0]) throw errors.notFound('No such bot');
      return viewOf(res.rows[0]);
    },

    /**
     * Changes the settings given; the others stay. A model must be allowed on the workspace's plan (400 `bad_request`
     * naming the allowed ones): every surface that sets it (dashboard, builder) comes through here.
     */
    async update(botId: string, patch: BotSettings): Promise<BotView> {
      if (patch.model !== undefined && patch.model !== null) {
        const plan = await deps.db.query<{ plan: string }>(
          `SELECT w.plan FROM bots b JOIN workspaces w ON w.id = b.workspace_id WHERE b.id = $1`,
          [botId],
        );
        if (!plan.rows[0]) throw errors.notFound('No such bot');
        deps.models.check(patch.model, plan.rows[0].plan);
      }
      const columns = SETTINGS.filter((k) => patch[k] !== undefined);
      const values: unknown[] = columns.map((c) => patch[c]);
      const sets = columns.map((c, i) => `${c} = $${i + 2}, `);
      if (patch.widget_look) {
        values.push(JSON.stringify(patch.widget_look));
        sets.push(`widget_look = jsonb_strip_nulls(widget_look || $${values.length + 1}::jsonb), `);
      }
      const res = await deps.db.query<BotView>(
        `UPDATE bots SET ${sets.join('')}updated_at = now() WHERE id = $1 RETURNING ${BOT_COLUMNS}`,
        [botId, ...values],
      );
      if (!res.rows[0]) throw errors.notFound('No such bot');
      return viewOf(res.rows[0]);
    },

    /**
     * A new workspace builder key asked of the builder by a signed-in person (recorded as its issuer): earlier keys
     * keep working (rule 5).
     */
    async issueBuilderKey(workspaceId: string, issuedBy: string | null): Promise<string> {
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
    },

    /**
     * The workspace's builder keys in force, newest first, with who issued each: every key for the owner, the ones
     * they issued themselves for an admin (docs/decisions/106-builder-key-issuers.md).
     */
    async listBuilderKeys(session: { workspaceId: string; userId: string; role: string }): Promise<BuilderKeyView[]> {
      const res = await deps.db.query<{
        id: string;
        fingerprint: string;
        label: string | null;
        issued_via: string | null;
        bot_id: string | null;
        bot_name: string | null;
        user_id: string | null;
        email: string | null;
        user_name: string | null;
        created_ms: string;
        used_ms: string | null;
      }>(
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
    },

    /**
     * Revokes one builder key: the owner any of the workspace's, an admin the ones they issued. Any other key is 404
     * (as the list does not show it).
     */
    async revokeBuilderKey(session: { workspaceId: string; userId: string; role: string }, keyId: string) {
      const res = await deps.db.query(
        `UPDATE api_keys SET revoked_at = now()
          WHERE id = $1 AND workspace_id = $2 AND kind = 'builder' AND revoked_at IS NULL
            AND ($3::text IS NULL OR issued_by = $3)`,
        [keyId, session.workspaceId, session.role === 'owner' ? null : session.userId],
      );
      if (!res.rowCount) throw errors.notFound('No builder key in force with this id that you may revoke');
    },

    /** Revokes every builder key of the workspace, the asking one included (rule 5: asking to revoke revokes all). */
    async revokeBuilderKeys(workspaceId: string): Promise<number> {
      const res = await deps.db.query(
        `UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND kind = 'builder' AND revoked_at IS NULL`,
        [workspaceId],
      );
      return res.rowCount ?? 0;
    },

    /** Issues a new key of one kind; the previous one stops working at once. The full value is in this answer only. */
    rotateKey(
      botId: string,
      kind: RotatableKind,
      issuedBy: string | null = null,
    ): Promise<{ key: string; fingerprint: string }> {
      return rotateKey(deps.db, deps.secrets, botId, kind, issuedBy);
    },

    readState(botId: string): Promise<AgentState> {
      return readState(deps.db, botId);
    },

    writeState(botId: string, document: Record<string, unknown>, version: number): Promise<AgentState> {
      return writeState(deps.db, botId, document, version);
    },
  };
}

export type BotService = ReturnType<typeof createBotService>;
