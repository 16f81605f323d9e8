import { createHash } from 'node:crypto';
import { type Db, type Queryable, withTransaction } from '../db';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';
import { countInWindows } from '../rate-windows';
import { newId } from '../ids';
import { hashKey, randomToken } from '../keys';
import type { Outbox } from '../outbox';
import { type PasswordHasher, hashPassword } from '../passwords';
import type { SecretBox } from '../secret-box';
import { type Role, createSession, endOtherSessions, endSession } from '../sessions';
import { DEFAULT_PLAN, planOf } from '../billing/plans';
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
  /** Credits granted at creation (README, Credits); default: the plan's included credits for this month. */
  initialCredits?: number;
}

/** A hash to verify against when the e-mail is unknown, so both failures take the same time. */
let dummyHash: Promise<string> | undefined;

/**
 * Sign-in attempts are counted per (e-mail, client) and per client in one-minute windows shared by every API replica,
 * and per account across clients (`login_throttle`) — all before the password is checked, in one statement each, so
 * attempts sent at once cannot all slip past a count read before any of them was recorded (docs/decisions.md, "Sign-in
 * limits"). Past a limit the answer is 429 `rate_limited` with `Retry-After`, before any hashing; a successful sign-in
 * takes its attempt back, so an office behind one address is not locked out by its own people.
 */
function loginBuckets(email: string, client: string): { account: string; address: string; throttle: string } {
  const hashed = accountKey(email);
  return { account: `login|${hashed}|${client}`, address: `login-ip|${client}`, throttle: hashed };
}

const accountKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');

async function countLoginAttempt(db: Db, email: string, client: string, slowdownSeconds: number): Promise<void> {
  const { account, address, throttle } = loginBuckets(email, client);
  await countOrRefuse(
    db,
    { [account]: LIMITS.loginAttemptsPerAccount, [address]: LIMITS.loginAttemptsPerAddress },
    'sign-in attempts',
  );
  // Per account, whatever the address: the attempt counts as a failure until it succeeds. From the Nth failure on,
  // the account is slowed down; attempts while it is are refused and not counted (the delay does not grow by them).
  const res = await db.query<{ refused: boolean; wait: number }>(
    `INSERT INTO login_throttle AS t (account, failures) VALUES ($1, 1)
     ON CONFLICT (account) DO UPDATE SET
       refused = COALESCE(t.locked_until > now(), false),
       failures = CASE WHEN t.locked_until > now() THEN t.failures
                       WHEN t.updated_at < now() - make_interval(secs => $4) THEN 1
                       ELSE t.failures + 1 END,
       locked_until = CASE WHEN t.locked_until > now() THEN t.locked_until
                           WHEN t.updated_at < now() - make_interval(secs => $4) THEN NULL
                           WHEN t.failures + 1 >= $2
                             THEN now() + make_interval(secs => LEAST($4, $3 * power(2, t.failures + 1 - $2)))
                           ELSE NULL END,
       updated_at = CASE WHEN t.locked_until > now() THEN t.updated_at ELSE now() END
     RETURNING refused, GREATEST(1, ceil(extract(epoch FROM (locked_until - now()))))::int AS wait`,
    [throttle, LIMITS.loginSlowdownAfterFailures, slowdownSeconds, LIMITS.loginSlowdownMaxSeconds],
  );
  const row = res.rows[0];
  if (row.refused) {
    throw tooMany(`Too many failed sign-ins for this account; retry after ${row.wait} s`, row.wait);
  }
}

/** A successful sign-in: its attempt is taken back from the windows, and the account's failures are forgotten. */
async function forgetLoginAttempt(db: Db, email: string, client: string): Promise<void> {
  const { account, address, throttle } = loginBuckets(email, client);
  await db.query(
    `UPDATE rate_windows SET count = count - 1
      WHERE bucket = ANY($1) AND window_start = date_trunc('minute', now()) AND count > 0`,
    [[account, address]],
  );
  await db.query(`DELETE FROM login_throttle WHERE account = $1`, [throttle]);
}

function tooMany(message: string, reset: number): ApiError {
  return new ApiError('rate_limited', message, {}, { 'Retry-After': String(reset) });
}

/**
 * Counts one request in each bucket and refuses it past its limit (sign-ups and reset requests per client address,
 * resets per e-mail): the answer to an abuser is 429 before any work or any e-mail.
 */
async function countOrRefuse(db: Db, limits: Record<string, number>, what: string): Promise<void> {
  const counted = await countInWindows(db, Object.keys(limits));
  const over = counted.find((w) => w.count > limits[w.bucket]);
  if (over) throw tooMany(`Too many ${what}; retry after ${over.reset} s`, over.reset);
}

/** A workspace with its owner and this month's included credits; no bot (the caller adds one if it wants). */
async function createWorkspace(
  tx: Queryable,
  input: {
    name: string;
    email: string;
    passwordHash: string;
    ownerName?: string;
    quota?: number;
    initialCredits?: number;
  },
): Promise<{ workspaceId: string; userId: string }> {
  const workspaceId = newId('ws');
  const userId = newId('usr');
  const plan = planOf(DEFAULT_PLAN);
  await tx.query(`INSERT INTO workspaces (id, name, monthly_conversation_quota, plan) VALUES ($1, $2, $3, $4)`, [
    workspaceId,
    input.name,
    input.quota ?? plan.monthly_conversations,
    plan.id,
  ]);
  try {
    await tx.query(
      `INSERT INTO users (id, workspace_id, email, password_hash, role, name) VALUES ($1, $2, $3, $4, 'owner', $5)`,
      [userId, workspaceId, input.email, input.passwordHash, input.ownerName ?? null],
    );
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw emailTaken();
    throw err;
  }
  // The first month's included credits (later months: the maintenance schedule, lib/billing/service.ts).
  const credits = input.initialCredits ?? plan.monthly_credits;
  if (credits > 0) await grantCredits(tx, workspaceId, credits, `${plan.name} plan: included credits`);
  return { workspaceId, userId };
}

const emailTaken = () =>
  new ApiError('email_taken', 'An account with this e-mail already exists; sign in, or reset its password');

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
    });
    const bot = await createBot(tx, box, { workspaceId, name: input.botName ?? 'My agent' });
    return { workspace_id: workspaceId, user_id: userId, email, password, bot_id: bot.botId, keys: bot.keys };
  });
}

export interface SignedInView {
  user: { id: string; email: string; name: string | null; role: Role };
  workspace: { id: string; name: string };
}

/** How long a password reset link works, and an invitation. */
const RESET_MINUTES = 60;
const INVITATION_DAYS = 7;

/**
 * Where the dashboard's pages are, for links in e-mails: from configuration only (`dashboardAddress` in lib/config.ts:
 * DASHBOARD_URL, else the API's public address), never from the request, whose Host a sender chooses.
 */
export type LinkBase = string;

async function viewOf(db: Queryable, userId: string): Promise<SignedInView> {
  const res = await db.query<{
    id: string;
    email: string;
    name: string | null;
    role: Role;
    ws_id: string;
    ws_name: string;
  }>(
    `SELECT u.id, u.email, u.name, u.role, w.id AS ws_id, w.name AS ws_name
       FROM users u JOIN workspaces w ON w.id = u.workspace_id WHERE u.id = $1`,
    [userId],
  );
  const row = res.rows[0];
  if (!row) throw new ApiError('unauthorized', 'The session expired; sign in again');
  return {
    user: { id: row.id, email: row.email, name: row.name, role: row.role },
    workspace: { id: row.ws_id, name: row.ws_name },
  };
}

/**
 * Accounts and sessions of the dashboard's people (`/v1/auth/*`): sign-up, sign-in, passwords, and joining a workspace
 * by invitation. Tokens sent by e-mail (resets, invitations) are credentials: random, kept as hashes, used once.
 */
export function createAccountService(deps: {
  db: Db;
  secrets: SecretBox;
  outbox: Outbox;
  /** Bounded hashing (createPasswordHasher): a flood gets a fast 503 instead of holding memory and threads. */
  passwords: PasswordHasher;
  /** The first delay of an account slowed down after failed sign-ins (LOGIN_SLOWDOWN_SECONDS). */
  loginSlowdownSeconds: number;
  /** Work that goes on after the answer (a reset's e-mail) reports its failures here. */
  warn: (fields: Record<string, unknown>, message: string) => void;
}) {
  const { db, passwords } = deps;

  /** Counts a use of an e-mailed token (reset, invitation) by the client; 429 past the per-address limit. */
  const countTokenUse = (what: string, client: string) =>
    countOrRefuse(db, { [`${what}|${client}`]: LIMITS.account.tokenUsesPerAddress }, 'attempts from this address');

  /** Signs a user in: a new session (the route sets its cookie). */
  async function signIn(userId: string): Promise<{ token: string; view: SignedInView }> {
    const view = await viewOf(db, userId);
    return { token: await createSession(db, userId, view.workspace.id), view };
  }

  /** A reset link for the account of `email`, if there is one: older links void, the new one e-mailed. */
  async function sendResetLink(email: string, linkBase: LinkBase): Promise<void> {
    const res = await db.query<{ id: string; email: string }>(
      `SELECT id, email FROM users WHERE lower(email) = lower($1)`,
      [email.trim()],
    );
    const user = res.rows[0];
    if (!user) return;
    const token = randomToken(40);
    await withTransaction(db, async (tx) => {
      await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [user.id]);
      await tx.query(
        `INSERT INTO password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(mins => $3))`,
        [hashKey(token), user.id, RESET_MINUTES],
      );
    });
    // The token rides in the fragment: it never reaches a server's access log, nor a Referer (the page reads it).
    const link = `${linkBase}/reset-password#token=${token}`;
    await deps.outbox.send(
      user.email,
      'Reset your Agent Platform password',
      `Someone asked to reset the password of your Agent Platform account (${user.email}).\n\n` +
        `Choose a new password here (the link works once, for ${RESET_MINUTES} minutes):\n${link}\n\n` +
        'If it was not you, ignore this message: your password stays as it is.',
    );
  }

  return {
    bootstrap: (input: BootstrapInput = {}) => bootstrapWorkspace(db, deps.secrets, input),

    /** A new workspace and its owner, signed in. 409 `email_taken` for an e-mail that has an account. */
    async signup(
      input: { email: string; password: string; name?: string; workspace_name: string },
      client: string,
    ): Promise<{ token: string; view: SignedInView }> {
      await countOrRefuse(
        db,
        { [`signup-ip|${client}`]: LIMITS.account.signupsPerAddress },
        'sign-ups from this address',
      );
      const passwordHash = await passwords.hash(input.password);
      const { userId } = await withTransaction(db, (tx) =>
        createWorkspace(tx, {
          name: input.workspace_name,
          email: input.email,
          passwordHash,
          ownerName: input.name,
        }),
      );
      return signIn(userId);
    },

    /**
     * Checks the password and opens a session; the same answer and a similar time for an unknown e-mail. A hash made
     * with older parameters is replaced by one at today's after a successful check.
     */
    async login(
      email: string,
      password: string,
      client: string,
    ): Promise<{ token: string; user: { user_id: string; workspace_id: string; email: string } }> {
      await countLoginAttempt(db, email, client, deps.loginSlowdownSeconds);
      const res = await db.query<{ id: string; workspace_id: string; email: string; password_hash: string }>(
        `SELECT id, workspace_id, email, password_hash FROM users WHERE lower(email) = lower($1)`,
        [email],
      );
      const user = res.rows[0];
      const checked = await passwords.verify(
        password,
        user?.password_hash ?? (await (dummyHash ??= hashPassword(randomToken(16)))),
      );
      if (!user || !checked.ok) throw new ApiError('invalid_credentials', 'Wrong e-mail or password');
      await forgetLoginAttempt(db, email, client);
      if (checked.rehash) {
        await db.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [user.id, await passwords.hash(password)]);
      }
      const token = await createSession(db, user.id, user.workspace_id);
      return { token, user: { user_id: user.id, workspace_id: user.workspace_id, email: user.email } };
    },

    logout: (token: string) => endSession(db, token),

    /** The signed-in user and their workspace, as the dashboard's pages show them (`GET /v1/auth/me`). */
    me: (session: { userId: string }) => viewOf(db, session.userId),

    /** Changes the signed-in person's own name (an empty one removes it: teammates then see the e-mail). */
    async rename(session: { userId: string }, name: string) {
      await db.query(`UPDATE users SET name = NULLIF($2, '') WHERE id = $1`, [session.userId, name]);
      return viewOf(db, session.userId);
    },

    /** Renames the workspace (owners and admins: the route checks the role). */
    async renameWorkspace(session: { userId: string; workspaceId: string }, name: string) {
      await db.query(`UPDATE workspaces SET name = $2 WHERE id = $1`, [session.workspaceId, name]);
      return viewOf(db, session.userId);
    },

    /**
     * Changes the signed-in user's password after checking the current one (401 `invalid_credentials`); every other
     * session of theirs ends (someone who knew the old password is signed out).
     */
    async changePassword(
      session: { userId: string },
      currentToken: string,
      input: { current_password: string; new_password: string },
    ): Promise<void> {
      const res = await db.query<{ password_hash: string }>(`SELECT password_hash FROM users WHERE id = $1`, [
        session.userId,
      ]);
      const row = res.rows[0];
      if (!row) throw new ApiError('unauthorized', 'The session expired; sign in again');
      if (!(await passwords.verify(input.current_password, row.password_hash)).ok) {
        throw new ApiError('invalid_credentials', 'The current password is wrong');
      }
      const passwordHash = await passwords.hash(input.new_password);
      await withTransaction(db, async (tx) => {
        await tx.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [session.userId, passwordHash]);
        // Reset links sent before stop working: whoever could read that mailbox does not get the account back.
        await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [
          session.userId,
        ]);
        await endOtherSessions(tx, session.userId, currentToken);
      });
    },

    /**
     * Sends a reset link to the e-mail if it has an account. The answer is the same either way and comes before any
     * of that work (looking the account up, the token, the e-mail), so neither its content nor its time tells whether
     * the address has an account. A new link voids the ones sent before. Counted per client and per e-mail, so
     * nobody floods an inbox.
     */
    async requestPasswordReset(email: string, client: string, linkBase: LinkBase): Promise<void> {
      await countOrRefuse(
        db,
        {
          [`reset-ip|${client}`]: LIMITS.account.resetRequestsPerAddress,
          [`reset|${accountKey(email)}`]: LIMITS.account.resetRequestsPerAccount,
        },
        'password reset requests',
      );
      // Not awaited: a slow mail server must not tell an attacker which addresses have accounts. Lost only if this
      // process dies in the next moments; the person asks again.
      void sendResetLink(email, linkBase).catch((err: unknown) =>
        deps.warn({ err: err instanceof Error ? err.message : String(err) }, 'password reset e-mail not sent'),
      );
    },

    /**
     * Sets a new password with a reset link's token (400 `invalid_token` if unknown, used or expired): the token is
     * spent, every session of the user ends, and a new one starts (the person is signed in). The token is looked at
     * before the new password is hashed, and uses are counted per client: a flood of made-up tokens costs no hashing.
     */
    async confirmPasswordReset(
      token: string,
      password: string,
      client: string,
    ): Promise<{ token: string; view: SignedInView }> {
      await countTokenUse('reset-confirm', client);
      const known = await db.query(
        `SELECT 1 FROM password_resets WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()`,
        [hashKey(token)],
      );
      if (!known.rowCount) throw resetLinkInvalid();
      const passwordHash = await passwords.hash(password);
      const userId = await withTransaction(db, async (tx) => {
        const spent = await tx.query<{ user_id: string }>(
          `UPDATE password_resets SET used_at = now()
            WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
          [hashKey(token)],
        );
        const id = spent.rows[0]?.user_id;
        if (!id) throw resetLinkInvalid();
        const user = await tx.query<{ email: string }>(
          `UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING email`,
          [id, passwordHash],
        );
        // Other links of the same person stop too: the newest password wins.
        await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [id]);
        // Whoever held the mailbox may sign in again at once, even while an attacker keeps the account slowed down.
        await tx.query(`DELETE FROM login_throttle WHERE account = $1`, [accountKey(user.rows[0].email)]);
        await endOtherSessions(tx, id);
        return id;
      });
      return signIn(userId);
    },

    /** What an invitation link shows before it is accepted; 404 when unknown, revoked, used or expired. */
    async invitation(token: string, client: string) {
      await countTokenUse('invitation', client);
      const res = await db.query<{ email: string; role: string; ws_name: string; invited_by: string | null }>(
        `SELECT i.email, i.role, w.name AS ws_name, u.email AS invited_by
           FROM invitations i JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN users u ON u.id = i.invited_by
          WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`,
        [hashKey(token)],
      );
      const row = res.rows[0];
      if (!row) throw invitationInvalid();
      return { email: row.email, role: row.role, workspace: { name: row.ws_name }, invited_by: row.invited_by };
    },

    /**
     * Joins the workspace of an invitation as the role it names, with a new password, signed in. An e-mail that has
     * an account already is 409 `email_taken` (an account belongs to one workspace: docs/decisions.md).
     */
    async acceptInvitation(token: string, input: { password: string; name?: string }, client: string) {
      await countTokenUse('invitation', client);
      const known = await db.query(
        `SELECT 1 FROM invitations
          WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()`,
        [hashKey(token)],
      );
      if (!known.rowCount) throw invitationInvalid();
      const passwordHash = await passwords.hash(input.password);
      const userId = await withTransaction(db, async (tx) => {
        const taken = await tx.query<{ id: string; workspace_id: string; email: string; role: Role }>(
          `UPDATE invitations SET accepted_at = now()
            WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
            RETURNING id, workspace_id, email, role`,
          [hashKey(token)],
        );
        const invitation = taken.rows[0];
        if (!invitation) throw invitationInvalid();
        const id = newId('usr');
        try {
          await tx.query(
            `INSERT INTO users (id, workspace_id, email, password_hash, role, name) VALUES ($1, $2, $3, $4, $5, $6)`,
            [id, invitation.workspace_id, invitation.email, passwordHash, invitation.role, input.name ?? null],
          );
        } catch (err) {
          if ((err as { code?: string }).code === '23505') throw emailTaken();
          throw err;
        }
        return id;
      });
      return signIn(userId);
    },
  };
}

const resetLinkInvalid = () =>
  new ApiError('invalid_token', 'This reset link is unknown, already used or expired; ask for a new one');
const invitationInvalid = () =>
  new ApiError('not_found', 'This invitation is unknown, already used, revoked or expired');

export type AccountService = ReturnType<typeof createAccountService>;

export { INVITATION_DAYS };
