import { type Db, withTransaction } from '../db';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { randomToken } from '../keys';
import { hashPassword, verifyPassword } from '../passwords';
import type { SecretBox } from '../secret-box';
import { createSession, endSession } from '../sessions';
import { type BotKeys, createBot } from '../bots/service';
import { grantCredits } from '../credits/service';

/** Everything shown once when a workspace is bootstrapped; afterwards only fingerprints are known. */
export interface BootstrapResult {
  workspace_id: string;
  user_id: string;
  email: string;
  password: string;
  bot_id: string;
  keys: BotKeys;
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

/** A new workspace's monthly conversation quota and welcome credits. */
const DEFAULT_QUOTA = 1000;
const WELCOME_CREDITS = 1000;

/** A hash to verify against when the e-mail is unknown, so both failures take the same time. */
const DUMMY_HASH = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** A workspace with its owner (and a password), its welcome credits and a first bot with every key: one transaction. */
export async function bootstrapWorkspace(db: Db, box: SecretBox, input: BootstrapInput = {}): Promise<BootstrapResult> {
  const workspaceId = newId('ws');
  const userId = newId('usr');
  const email = input.email ?? `owner+${workspaceId.slice(3, 11).toLowerCase()}@example.com`;
  const password = input.password ?? randomToken(20);
  const passwordHash = await hashPassword(password);
  return withTransaction(db, async (tx) => {
    await tx.query(`INSERT INTO workspaces (id, name, monthly_conversation_quota) VALUES ($1, $2, $3)`, [
      workspaceId,
      input.workspaceName ?? 'My workspace',
      input.monthlyConversationQuota ?? DEFAULT_QUOTA,
    ]);
    await tx.query(
      `INSERT INTO users (id, workspace_id, email, password_hash, role) VALUES ($1, $2, $3, $4, 'owner')`,
      [userId, workspaceId, email, passwordHash],
    );
    const credits = input.initialCredits ?? WELCOME_CREDITS;
    if (credits > 0) await grantCredits(tx, workspaceId, credits, 'welcome grant');
    const bot = await createBot(tx, box, { workspaceId, name: input.botName ?? 'My agent' });
    return { workspace_id: workspaceId, user_id: userId, email, password, bot_id: bot.botId, keys: bot.keys };
  });
}

/** Accounts and sessions of the dashboard's people (`/v1/auth/*`). */
export function createAccountService(deps: { db: Db; secrets: SecretBox }) {
  return {
    bootstrap: (input: BootstrapInput = {}) => bootstrapWorkspace(deps.db, deps.secrets, input),

    /** Checks the password and opens a session; the same answer and a similar time for an unknown e-mail. */
    async login(
      email: string,
      password: string,
    ): Promise<{ token: string; user: { user_id: string; workspace_id: string; email: string } }> {
      const res = await deps.db.query<{ id: string; workspace_id: string; email: string; password_hash: string }>(
        `SELECT id, workspace_id, email, password_hash FROM users WHERE lower(email) = lower($1)`,
        [email],
      );
      const user = res.rows[0];
      const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
      if (!user || !ok) throw new ApiError('invalid_credentials', 'Wrong e-mail or password');
      const token = await createSession(deps.db, user.id, user.workspace_id);
      return { token, user: { user_id: user.id, workspace_id: user.workspace_id, email: user.email } };
    },

    logout: (token: string) => endSession(deps.db, token),
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
