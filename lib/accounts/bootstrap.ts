import { type Db, type Queryable, withTransaction } from '../db';
import { newId } from '../ids';
import { randomToken } from '../keys';
import { hashPassword } from '../passwords';
import type { SecretBox } from '../secret-box';
import { DEFAULT_PLAN, planOf } from '../billing/plans';
import { type BotKeys, createBot } from '../bots/service';
import { grantCredits } from '../credits/service';
import { unlessEmailTaken } from './errors';

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
  /** Credits granted at creation (README, Credits); default: the plan's included credits for this month. */
  initialCredits?: number;
}

/**
 * A workspace with its owner; no bot (the caller adds one if it wants). A verified owner's workspace (the operators'
 * own, by bootstrap) gets this month's included credits at once; an unverified one's (a sign-up) has none and this
 * month left ungranted, so the owner's confirmation grants it (docs/decisions/111-signup-verification.md).
 */
export async function createWorkspace(
  tx: Queryable,
  input: {
    name: string;
    email: string;
    passwordHash: string;
    ownerName?: string;
    quota?: number;
    initialCredits?: number;
    /** Whether the owner's e-mail address counts as confirmed. */
    verified: boolean;
  },
): Promise<{ workspaceId: string; userId: string }> {
  const workspaceId = newId('ws');
  const userId = newId('usr');
  const plan = planOf(DEFAULT_PLAN);
  await tx.query(
    `INSERT INTO workspaces (id, name, monthly_conversation_quota, plan, included_credits_through)
     VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN date_trunc('month', now())
                                  ELSE date_trunc('month', now()) - interval '1 month' END)`,
    [workspaceId, input.name, input.quota ?? plan.monthly_conversations, plan.id, input.verified],
  );
  await unlessEmailTaken(
    tx.query(
      `INSERT INTO users (id, workspace_id, email, password_hash, role, name, email_verified_at)
       VALUES ($1, $2, $3, $4, 'owner', $5, CASE WHEN $6 THEN now() END)`,
      [userId, workspaceId, input.email, input.passwordHash, input.ownerName ?? null, input.verified],
    ),
  );
  if (!input.verified) return { workspaceId, userId };
  // The first month's included credits (later months: the maintenance schedule, lib/billing/service.ts).
  const credits = input.initialCredits ?? plan.monthly_credits;
  if (credits > 0) await grantCredits(tx, workspaceId, credits, `${plan.name} plan: included credits`);
  return { workspaceId, userId };
}

/** A workspace with its owner (and a password), its welcome credits and a first bot with every key: one transaction. */
export async function bootstrapWorkspace(db: Db, box: SecretBox, input: BootstrapInput = {}): Promise<BootstrapResult> {
  const email = input.email ?? `owner+${randomToken(8).toLowerCase()}@example.com`;
  const password = input.password ?? randomToken(20);
  const passwordHash = await hashPassword(password);
  return withTransaction(db, async (tx) => {
    const { workspaceId, userId } = await createWorkspace(tx, {
      name: input.workspaceName ?? 'My workspace',
      email,
      passwordHash,
      quota: input.monthlyConversationQuota,
      initialCredits: input.initialCredits,
      // The platform's operators make these (agentctl, tests): their own addresses, nothing to confirm.
      verified: true,
    });
    const bot = await createBot(tx, box, { workspaceId, name: input.botName ?? 'My agent' });
    return { workspace_id: workspaceId, user_id: userId, email, password, bot_id: bot.botId, keys: bot.keys };
  });
}
