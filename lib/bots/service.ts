import type { Db, DbClient, Queryable } from './db';
import { withTransaction } from './db';
import { newId } from './ids';
import { fingerprint, generateKey, hashKey, randomToken } from './keys';
import { hashPassword } from './passwords';
import type { SecretBox } from './secret-box';

/** Everything shown once when a workspace is bootstrapped; afterwards only fingerprints are known. */
export interface BootstrapResult {
  workspace_id: string;
  user_id: string;
  email: string;
  password: string;
  bot_id: string;
  keys: {
    secret_key: string;
    public_key: string;
    builder_key: string;
    handoff_webhook_secret: string;
    visitor_identity_secret: string;
  };
}

export interface BootstrapInput {
  workspaceName?: string;
  email?: string;
  password?: string;
  botName?: string;
  monthlyConversationQuota?: number;
  /** Credits granted at creation (README, Credits); default 1000. */
  initialCredits?: number;
}

export async function bootstrapWorkspace(db: Db, box: SecretBox, input: BootstrapInput = {}): Promise<BootstrapResult> {
  const workspaceId = newId('ws');
  const userId = newId('usr');
  const email = input.email ?? `owner+${workspaceId.slice(3, 11).toLowerCase()}@example.com`;
  const password = input.password ?? randomToken(20);
  const passwordHash = await hashPassword(password);
  return withTransaction(db, async (tx) => {
    await tx.query(
      `INSERT INTO workspaces (id, name, monthly_conversation_quota) VALUES ($1, $2, COALESCE($3, 1000))`,
      [workspaceId, input.workspaceName ?? 'My workspace', input.monthlyConversationQuota ?? null],
    );
    await tx.query(`INSERT INTO users (id, workspace_id, email, password_hash, role) VALUES ($1, $2, $3, $4, 'owner')`, [
      userId,
      workspaceId,
      email,
      passwordHash,
    ]);
    const credits = input.initialCredits ?? 1000;
    if (credits > 0) await grantCredits(tx, workspaceId, credits, 'welcome grant');
    const bot = await createBot(tx, box, { workspaceId, name: input.botName ?? 'My agent' });
    return { workspace_id: workspaceId, user_id: userId, email, password, bot_id: bot.botId, keys: bot.keys };
  });
}

export async function createBot(
  tx: DbClient | Queryable,
  box: SecretBox,
  input: { workspaceId: string; name: string; instructions?: string },
): Promise<{ botId: string; keys: BootstrapResult['keys'] }> {
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
  const secretKey = await insertApiKey(tx, { workspaceId: input.workspaceId, botId, kind: 'secret' });
  const builderKey = await insertApiKey(tx, { workspaceId: input.workspaceId, botId, kind: 'builder' });
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

async function insertApiKey(
  tx: Queryable,
  input: { workspaceId: string; botId: string | null; kind: 'secret' | 'builder' | 'access' },
): Promise<string> {
  const key = generateKey(input.kind);
  await tx.query(
    `INSERT INTO api_keys (id, workspace_id, bot_id, kind, key_hash, fingerprint) VALUES ($1, $2, $3, $4, $5, $6)`,
    [newId('key'), input.workspaceId, input.botId, input.kind, hashKey(key), fingerprint(key)],
  );
  return key;
}

export type RotatableKind = 'secret' | 'identity' | 'builder' | 'webhook';

/**
 * Issues a new key of one kind for a bot; the previous one stops working at once (same transaction), as the spec's
 * dashboard calls `/secret` and `/identity-secret` require.
 */
export async function rotateKey(db: Db, box: SecretBox, botId: string, kind: RotatableKind): Promise<{ key: string; fingerprint: string }> {
  return withTransaction(db, async (tx) => {
    const bot = await tx.query<{ workspace_id: string }>(`SELECT workspace_id FROM bots WHERE id = $1 FOR UPDATE`, [botId]);
    if (!bot.rows[0]) throw new NotFoundError(`No bot with id ${botId}`);
    const workspaceId = bot.rows[0].workspace_id;
    if (kind === 'secret' || kind === 'builder') {
      await tx.query(`UPDATE api_keys SET revoked_at = now() WHERE bot_id = $1 AND kind = $2 AND revoked_at IS NULL`, [botId, kind]);
      const key = await insertApiKey(tx, { workspaceId, botId, kind });
      return { key, fingerprint: fingerprint(key) };
    }
    const key = generateKey(kind);
    const column = kind === 'identity' ? 'identity_secret' : 'webhook_secret';
    await tx.query(`UPDATE bots SET ${column}_sealed = $2, ${column}_fingerprint = $3, updated_at = now() WHERE id = $1`, [
      botId,
      box.seal(key),
      fingerprint(key),
    ]);
    return { key, fingerprint: fingerprint(key) };
  });
}

export class NotFoundError extends Error {
  readonly code = 'not_found';
}

/** Adds credits to a workspace: one ledger row and the balance, in the caller's transaction. */
export async function grantCredits(tx: Queryable, workspaceId: string, amount: number, reason: string): Promise<number> {
  const res = await tx.query<{ credit_balance: number }>(
    `UPDATE workspaces SET credit_balance = credit_balance + $2 WHERE id = $1 RETURNING credit_balance`,
    [workspaceId, amount],
  );
  if (!res.rows[0]) throw new NotFoundError(`No workspace with id ${workspaceId}`);
  await tx.query(`INSERT INTO credit_ledger (workspace_id, amount, reason) VALUES ($1, $2, $3)`, [workspaceId, amount, reason]);
  return res.rows[0].credit_balance;
}
