import { type DbClient, type Queryable, withTransaction } from '../db';
import { errors } from '../errors';
import { newId } from '../ids';
import { fingerprint, generateKey } from '../keys';
import type { SecretBox } from '../secret-box';
import type { BotDeps } from './deps';
import { recordExposure } from './exposures';
import { insertApiKey, refuseKeysBeforeConfirmation } from './keys';
import { BOT_COLUMNS, type BotView, viewOf } from './views';

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

/** A new bot with every key, shown in full in this answer only. */
export async function addBot(
  deps: BotDeps,
  workspaceId: string,
  input: { name: string; instructions?: string },
  issuedBy: string | null = null,
): Promise<{ bot: BotView; keys: BotKeys }> {
  const { botId, keys } = await withTransaction(deps.db, (tx) =>
    createBot(tx, deps.secrets, { workspaceId, name: input.name, instructions: input.instructions, issuedBy }),
  );
  const res = await deps.db.query<BotView>(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [botId]);
  return { bot: viewOf(res.rows[0]), keys };
}

/**
 * Deletes a bot and everything of it: its triggers' Schedules, its scans, its files first (they live outside the
 * database), then the rows (keys, conversations, knowledge, runs go with it by cascade). Its keys stop at once.
 */
export async function removeBot(deps: BotDeps, botId: string): Promise<void> {
  await deps.beforeDelete(botId);
  const res = await deps.db.query(`DELETE FROM bots WHERE id = $1`, [botId]);
  if (!res.rowCount) throw errors.notFound('No such bot');
}
