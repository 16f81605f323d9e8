import { createHash } from 'node:crypto';
import { type Db, withTransaction } from '../db';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';
import { countInWindows, readWindows } from '../rate-windows';
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
let dummyHash: Promise<string> | undefined;

/**
 * Failed sign-ins are counted per (e-mail, client address) and per client address, in one-minute windows shared by
 * every API replica (docs/decisions.md, "Sign-in limits"). Past either limit the answer is 429 `rate_limited` with
 * `Retry-After`, before any password is checked; successful sign-ins are not counted, so an office behind one
 * address is not locked out by its own people.
 */
function loginBuckets(email: string, ip: string): { account: string; address: string } {
  const hashed = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
  return { account: `login|${hashed}|${ip}`, address: `login-ip|${ip}` };
}

async function refuseOverLoginLimits(db: Db, email: string, ip: string): Promise<void> {
  const { account, address } = loginBuckets(email, ip);
  const windows = await readWindows(db, [account, address]);
  const over = windows.find((w) =>
    w.bucket === account ? w.count >= LIMITS.loginAttemptsPerAccount : w.count >= LIMITS.loginAttemptsPerAddress,
  );
  if (over) {
    throw new ApiError(
      'rate_limited',
      `Too many failed sign-ins; retry after ${over.reset} s`,
      {},
      { 'Retry-After': String(over.reset) },
    );
  }
}

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

export interface SignedInView {
  user: { id: string; email: string; role: 'owner' | 'member' };
  workspace: { id: string; name: string };
}

/** Accounts and sessions of the dashboard's people (`/v1/auth/*`). */
export function createAccountService(deps: { db: Db; secrets: SecretBox }) {
  return {
    bootstrap: (input: BootstrapInput = {}) => bootstrapWorkspace(deps.db, deps.secrets, input),

    /**
     * Checks the password and opens a session; the same answer and a similar time for an unknown e-mail. A hash made
     * with older parameters is replaced by one at today's after a successful check.
     */
    async login(
      email: string,
      password: string,
      ip: string,
    ): Promise<{ token: string; user: { user_id: string; workspace_id: string; email: string } }> {
      await refuseOverLoginLimits(deps.db, email, ip);
      const res = await deps.db.query<{ id: string; workspace_id: string; email: string; password_hash: string }>(
        `SELECT id, workspace_id, email, password_hash FROM users WHERE lower(email) = lower($1)`,
        [email],
      );
      const user = res.rows[0];
      const checked = await verifyPassword(
        password,
        user?.password_hash ?? (await (dummyHash ??= hashPassword(randomToken(16)))),
      );
      if (!user || !checked.ok) {
        const { account, address } = loginBuckets(email, ip);
        await countInWindows(deps.db, [account, address]);
        throw new ApiError('invalid_credentials', 'Wrong e-mail or password');
      }
      if (checked.rehash) {
        await deps.db.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [
          user.id,
          await hashPassword(password),
        ]);
      }
      const token = await createSession(deps.db, user.id, user.workspace_id);
      return { token, user: { user_id: user.id, workspace_id: user.workspace_id, email: user.email } };
    },

    logout: (token: string) => endSession(deps.db, token),

    /** The signed-in user and their workspace, as the dashboard's pages show them (`GET /v1/auth/me`). */
    async me(session: { userId: string; workspaceId: string }): Promise<SignedInView> {
      const res = await deps.db.query<{
        id: string;
        email: string;
        role: 'owner' | 'member';
        ws_id: string;
        ws_name: string;
      }>(
        `SELECT u.id, u.email, u.role, w.id AS ws_id, w.name AS ws_name
           FROM users u JOIN workspaces w ON w.id = u.workspace_id
          WHERE u.id = $1 AND u.workspace_id = $2`,
        [session.userId, session.workspaceId],
      );
      const row = res.rows[0];
      if (!row) throw new ApiError('unauthorized', 'The session expired; sign in again');
      return {
        user: { id: row.id, email: row.email, role: row.role },
        workspace: { id: row.ws_id, name: row.ws_name },
      };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
