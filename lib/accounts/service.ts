import { createHash } from 'node:crypto';
import { type Db, type Queryable, withTransaction } from '../db';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import { countInWindows } from '../rate-windows';
import { newId } from '../ids';
import { hashKey, randomToken } from '../keys';
import type { Outbox } from '../outbox';
import { type PasswordHasher, hashPassword } from '../passwords';
import type { SecretBox } from '../secret-box';
import { type Role, createSession, endOtherSessions, endSession } from '../sessions';
import { DEFAULT_PLAN, planOf } from '../billing/plans';
import { grantMonthsIncludedCredits } from '../billing/service';
import { type BotKeys, createBot, replaceWorkspaceKeys } from '../bots/service';
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
 * Sign-in attempts are counted per (account, client) and per client in one-minute windows shared by every API replica,
 * and per account across clients (`login_throttle`) — all before the password is checked, in one statement each, so
 * attempts sent at once cannot all slip past a count read before any of them was recorded (docs/decisions/054-sign-in-limits.md).
 * Past a limit the answer is 429 `rate_limited` with `Retry-After`, before any hashing; a successful sign-in
 * takes its attempt back, so an office behind one address is not locked out by its own people.
 *
 * The account is the one the e-mail names, however it is typed (`Foo@Example.com`, ` foo@example.com `, in full-width
 * letters): the throttle's key is its id, found in the same statement, so every spelling shares one budget
 * (docs/decisions/login-throttle-per-account.md). An e-mail that names no account is counted by its normalised text.
 * The per-client window counts the normalised e-mail, which is the same for every spelling that finds the account.
 */
function loginBuckets(email: string, client: string): { account: string; address: string } {
  return { account: `login|${accountKey(email)}|${client}`, address: `login-ip|${client}` };
}

/** The e-mail as typed, Unicode-normalised (NFKC: full-width letters become letters), without surrounding spaces. */
const typedAddress = (email: string) => email.normalize('NFKC').trim();

const accountKey = (email: string) =>
  createHash('sha256').update(typedAddress(email).toLowerCase()).digest('base64url');

/** The sign-in throttle's key of an account (`login_throttle.account`). */
const accountThrottle = (userId: string) => `user:${userId}`;

interface LoginUser {
  id: string;
  workspace_id: string;
  email: string;
  password_hash: string;
}

/** Counts a sign-in attempt (429 past a limit) and finds the account the e-mail names, if any. */
async function countLoginAttempt(
  db: Db,
  email: string,
  client: string,
  slowdownSeconds: number,
): Promise<LoginUser | undefined> {
  const { account, address } = loginBuckets(email, client);
  await countOrRefuse(
    db,
    { [account]: LIMITS.loginAttemptsPerAccount, [address]: LIMITS.loginAttemptsPerAddress },
    'sign-in attempts',
  );
  // Per account, whatever the address: the attempt counts as a failure until it succeeds. From the Nth failure on,
  // the account is slowed down; attempts while it is are refused and not counted (the delay does not grow by them).
  const res = await db.query<{ refused: boolean; wait: number } & Partial<LoginUser>>(
    `WITH u AS (SELECT id, workspace_id, email, password_hash FROM users WHERE lower(email) = lower($5)),
     t AS (
       INSERT INTO login_throttle AS t (account, failures) VALUES (COALESCE((SELECT 'user:' || id FROM u), $1), 1)
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
       RETURNING refused, GREATEST(1, ceil(extract(epoch FROM (locked_until - now()))))::int AS wait
     )
     SELECT t.refused, t.wait, u.id, u.workspace_id, u.email, u.password_hash FROM t LEFT JOIN u ON true`,
    [
      `email:${accountKey(email)}`,
      LIMITS.loginSlowdownAfterFailures,
      slowdownSeconds,
      LIMITS.loginSlowdownMaxSeconds,
      typedAddress(email),
    ],
  );
  const { refused, wait, ...user } = res.rows[0];
  if (refused) throw tooMany(`Too many failed sign-ins for this account; retry after ${wait} s`, wait);
  return user.id ? (user as LoginUser) : undefined;
}

/** A successful sign-in: its attempt is taken back from the windows, and the account's failures are forgotten. */
async function forgetLoginAttempt(db: Db, email: string, client: string, userId: string): Promise<void> {
  const { account, address } = loginBuckets(email, client);
  await db.query(
    `UPDATE rate_windows SET count = count - 1
      WHERE bucket = ANY($1) AND window_start = date_trunc('minute', now()) AND count > 0`,
    [[account, address]],
  );
  await db.query(`DELETE FROM login_throttle WHERE account = $1`, [accountThrottle(userId)]);
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

/**
 * A workspace with its owner; no bot (the caller adds one if it wants). A verified owner's workspace (the operators'
 * own, by bootstrap) gets this month's included credits at once; an unverified one's (a sign-up) has none and this
 * month left ungranted, so the owner's confirmation grants it (docs/decisions/111-signup-verification.md).
 */
async function createWorkspace(
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
  try {
    await tx.query(
      `INSERT INTO users (id, workspace_id, email, password_hash, role, name, email_verified_at)
       VALUES ($1, $2, $3, $4, 'owner', $5, CASE WHEN $6 THEN now() END)`,
      [userId, workspaceId, input.email, input.passwordHash, input.ownerName ?? null, input.verified],
    );
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw emailTaken();
    throw err;
  }
  if (!input.verified) return { workspaceId, userId };
  // The first month's included credits (later months: the maintenance schedule, lib/billing/service.ts).
  const credits = input.initialCredits ?? plan.monthly_credits;
  if (credits > 0) await grantCredits(tx, workspaceId, credits, `${plan.name} plan: included credits`);
  return { workspaceId, userId };
}

/**
 * The person proved they read the mailbox of their address (a confirmation link, an invitation, a password reset):
 * marked verified once, their confirmation links spent, and — for a workspace's owner — the month's included credits
 * their workspace was waiting for, granted in the caller's transaction. The credits granted; null when the person was
 * verified already. The row lock of the UPDATE makes two proofs at once take turns: the second finds them verified.
 */
async function markEmailVerified(tx: Queryable, userId: string): Promise<number | null> {
  const marked = await tx.query<{ workspace_id: string; role: Role }>(
    `UPDATE users SET email_verified_at = now() WHERE id = $1 AND email_verified_at IS NULL
     RETURNING workspace_id, role`,
    [userId],
  );
  const user = marked.rows[0];
  if (!user) return null;
  await tx.query(`UPDATE email_verifications SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  if (user.role !== 'owner') return 0;
  return (await grantMonthsIncludedCredits(tx, user.workspace_id)) ?? 0;
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
      // The platform's operators make these (agentctl, tests): their own addresses, nothing to confirm.
      verified: true,
    });
    const bot = await createBot(tx, box, { workspaceId, name: input.botName ?? 'My agent' });
    return { workspace_id: workspaceId, user_id: userId, email, password, bot_id: bot.botId, keys: bot.keys };
  });
}

export interface SignedInView {
  user: { id: string; email: string; name: string | null; role: Role; email_verified: boolean };
  workspace: { id: string; name: string; credits_awaiting_confirmation: number };
}

/** How long a password reset link works, an invitation, and a link confirming an e-mail address. */
const RESET_MINUTES = 60;
const INVITATION_DAYS = 7;
const VERIFICATION_HOURS = 48;

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
    verified: boolean;
    ws_id: string;
    ws_name: string;
    plan: string;
    month_due: boolean;
  }>(
    `SELECT u.id, u.email, u.name, u.role, u.email_verified_at IS NOT NULL AS verified,
            w.id AS ws_id, w.name AS ws_name, w.plan,
            w.included_credits_through < date_trunc('month', now())::date AS month_due
       FROM users u JOIN workspaces w ON w.id = u.workspace_id WHERE u.id = $1`,
    [userId],
  );
  const row = res.rows[0];
  if (!row) throw new ApiError('unauthorized', 'The session expired; sign in again');
  // What the owner's confirmation would grant now: the month's included credits, while they wait for it.
  const awaiting = !row.verified && row.role === 'owner' && row.month_due ? planOf(row.plan).monthly_credits : 0;
  return {
    user: { id: row.id, email: row.email, name: row.name, role: row.role, email_verified: row.verified },
    workspace: { id: row.ws_id, name: row.ws_name, credits_awaiting_confirmation: awaiting },
  };
}

/**
 * A new link confirming a person's address, in the caller's transaction: the links sent before stop working (only the
 * newest one in the mailbox works, as with resets). The token, shown once (in the e-mail).
 */
async function issueVerificationLink(tx: Queryable, userId: string, resend: boolean): Promise<string> {
  const token = randomToken(40);
  await tx.query(`UPDATE email_verifications SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  await tx.query(
    `INSERT INTO email_verifications (token_hash, user_id, resend, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
    [hashKey(token), userId, resend, VERIFICATION_HOURS],
  );
  return token;
}

/**
 * Refuses a person's resend past the hour's limit (links asked for again; the sign-up's own is not counted), with
 * `Retry-After` until the oldest of the hour leaves it. In the caller's transaction, under the person's row lock, so
 * resends sent at once are all counted.
 */
async function refuseOverResendLimit(tx: Queryable, userId: string): Promise<void> {
  const res = await tx.query<{ count: number; retry: number }>(
    `SELECT count(*)::int AS count,
            COALESCE(ceil(extract(epoch FROM min(created_at) + interval '1 hour' - now())), 1)::int AS retry
       FROM email_verifications WHERE user_id = $1 AND resend AND created_at > now() - interval '1 hour'`,
    [userId],
  );
  const { count, retry } = res.rows[0];
  if (count < LIMITS.account.verificationResendsPerHour) return;
  const wait = Math.max(1, retry);
  throw new ApiError(
    'rate_limited',
    `${count} confirmation links were sent in the last hour; retry after ${wait} s`,
    {},
    { 'Retry-After': String(wait) },
  );
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

  /**
   * E-mails a link confirming the person's address. The subject and the text are ours alone (the workspace's and the
   * person's names are user-chosen text a phishing message would want to place); the token rides in the fragment.
   */
  async function sendVerificationLink(user: { email: string; credits: number }, token: string, linkBase: LinkBase) {
    const link = `${linkBase}/verify-email#token=${token}`;
    const credits =
      user.credits > 0
        ? `Confirm it to receive your workspace's ${user.credits.toLocaleString('en-US')} included credits:\n`
        : 'Confirm it here:\n';
    await deps.outbox.send(
      user.email,
      'Confirm your e-mail address for Agent Platform',
      `Someone created an Agent Platform account for ${user.email}.\n\n${credits}${link}\n\n` +
        `The link works for ${VERIFICATION_HOURS} hours. If it was not you, ignore this message.`,
    );
  }

  /** Sends without holding the answer: a slow mail server slows nobody; a failure is logged (the person asks again). */
  const sendLater = (send: Promise<void>, what: string) =>
    void send.catch((err: unknown) => deps.warn({ err: err instanceof Error ? err.message : String(err) }, what));

  /** Signs a user in: a new session (the route sets its cookie). */
  async function signIn(userId: string): Promise<{ token: string; view: SignedInView }> {
    const view = await viewOf(db, userId);
    return { token: await createSession(db, userId, view.workspace.id), view };
  }

  /** A reset link for the account of `email`, if there is one: older links void, the new one e-mailed. */
  async function sendResetLink(email: string, linkBase: LinkBase): Promise<void> {
    const res = await db.query<{ id: string; email: string }>(
      `SELECT id, email FROM users WHERE lower(email) = lower($1)`,
      [typedAddress(email)],
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

    /**
     * A new workspace and its owner, signed in, with no credits until the owner confirms the address by the link
     * e-mailed now (not awaited). 409 `email_taken` for an e-mail that has an account.
     */
    async signup(
      input: { email: string; password: string; name?: string; workspace_name: string },
      client: string,
      linkBase: LinkBase,
    ): Promise<{ token: string; view: SignedInView }> {
      await countOrRefuse(
        db,
        { [`signup-ip|${client}`]: LIMITS.account.signupsPerAddress },
        'sign-ups from this address',
      );
      const passwordHash = await passwords.hash(input.password);
      const { userId, link } = await withTransaction(db, async (tx) => {
        const created = await createWorkspace(tx, {
          name: input.workspace_name,
          email: input.email,
          passwordHash,
          ownerName: input.name,
          verified: false,
        });
        return { ...created, link: await issueVerificationLink(tx, created.userId, false) };
      });
      const signedIn = await signIn(userId);
      sendLater(
        sendVerificationLink(
          { email: signedIn.view.user.email, credits: signedIn.view.workspace.credits_awaiting_confirmation },
          link,
          linkBase,
        ),
        'e-mail confirmation not sent',
      );
      return signedIn;
    },

    /**
     * Confirms an e-mail address with the token of its link (400 `invalid_token` if unknown, expired or replaced by a
     * newer link): the person is verified and, for an owner, the workspace gets the month's included credits — in one
     * transaction, once however often the link is followed. A link of a person verified already answers 200 again and
     * grants nothing (a double click, a second tab). Uses are counted per client, as other tokens are.
     */
    async verifyEmail(
      token: string,
      client: string,
    ): Promise<{ status: 'verified'; email: string; credits_granted: number }> {
      await countTokenUse('verify-email', client);
      return withTransaction(db, async (tx) => {
        // The person's row is locked: confirmations at once take turns, and a later one reads the earlier's outcome.
        const found = await tx.query<{ id: string; email: string; verified: boolean; live: boolean }>(
          `SELECT u.id, u.email, u.email_verified_at IS NOT NULL AS verified,
                  v.used_at IS NULL AND v.expires_at > now() AS live
             FROM email_verifications v JOIN users u ON u.id = v.user_id
            WHERE v.token_hash = $1
              FOR UPDATE OF u`,
          [hashKey(token)],
        );
        const row = found.rows[0];
        if (!row || (!row.verified && !row.live)) throw verificationLinkInvalid();
        const credits = row.verified ? null : await markEmailVerified(tx, row.id);
        return { status: 'verified' as const, email: row.email, credits_granted: credits ?? 0 };
      });
    },

    /**
     * A new confirmation link for the signed-in person, whose address is not confirmed yet (409 `conflict` once it
     * is): the older links stop working; 429 past the resends of an hour. The e-mail is not awaited.
     */
    async resendVerification(session: { userId: string }, linkBase: LinkBase): Promise<void> {
      const link = await withTransaction(db, async (tx) => {
        const res = await tx.query<{ verified: boolean }>(
          `SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1 FOR UPDATE`,
          [session.userId],
        );
        if (!res.rows[0]) throw new ApiError('unauthorized', 'The session expired; sign in again');
        if (res.rows[0].verified) throw errors.conflict('Your e-mail address is confirmed already');
        await refuseOverResendLimit(tx, session.userId);
        return issueVerificationLink(tx, session.userId, true);
      });
      const view = await viewOf(db, session.userId);
      sendLater(
        sendVerificationLink(
          { email: view.user.email, credits: view.workspace.credits_awaiting_confirmation },
          link,
          linkBase,
        ),
        'e-mail confirmation not sent',
      );
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
      const user = await countLoginAttempt(db, email, client, deps.loginSlowdownSeconds);
      const checked = await passwords.verify(
        password,
        user?.password_hash ?? (await (dummyHash ??= hashPassword(randomToken(16)))),
      );
      if (!user || !checked.ok) throw new ApiError('invalid_credentials', 'Wrong e-mail or password');
      await forgetLoginAttempt(db, email, client, user.id);
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
        const user = await tx.query<{ workspace_id: string; role: Role }>(
          `UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING workspace_id, role`,
          [id, passwordHash],
        );
        // Other links of the same person stop too: the newest password wins.
        await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [id]);
        // The link reached them at their address: that proves the mailbox as a confirmation link would. If this is the
        // first proof, whoever held the account before did so without it: the keys they were shown stop.
        if ((await markEmailVerified(tx, id)) !== null && user.rows[0].role === 'owner') {
          await replaceWorkspaceKeys(tx, deps.secrets, user.rows[0].workspace_id);
        }
        // Whoever held the mailbox may sign in again at once, even while an attacker keeps the account slowed down.
        await tx.query(`DELETE FROM login_throttle WHERE account = $1`, [accountThrottle(id)]);
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
     * an account already is 409 `email_taken` (an account belongs to one workspace: docs/decisions/084-accounts.md).
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
          // Verified: the invitation's link went to this address.
          await tx.query(
            `INSERT INTO users (id, workspace_id, email, password_hash, role, name, email_verified_at)
             VALUES ($1, $2, $3, $4, $5, $6, now())`,
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
const verificationLinkInvalid = () =>
  new ApiError(
    'invalid_token',
    'This confirmation link is unknown, expired or replaced by a newer one; ask for a new one',
  );
const invitationInvalid = () =>
  new ApiError('not_found', 'This invitation is unknown, already used, revoked or expired');

export type AccountService = ReturnType<typeof createAccountService>;

export { INVITATION_DAYS };
