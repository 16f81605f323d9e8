import type { Db, Queryable } from '../db';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';
import { randomToken } from '../keys';
import { hashPassword } from '../passwords';
import { createSession, endSession } from '../sessions';
import { accountKey, countOrRefuse, typedAddress } from './abuse';
import type { AccountDeps } from './deps';
import { tooMany } from './errors';
import { type SignedInView, viewOf } from './profile';

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
 * (docs/decisions/141-login-throttle-per-account.md). An e-mail that names no account is counted by its normalised text.
 * The per-client window counts the normalised e-mail, which is the same for every spelling that finds the account.
 */
function loginBuckets(email: string, client: string): { account: string; address: string } {
  return { account: `login|${accountKey(email)}|${client}`, address: `login-ip|${client}` };
}

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

/**
 * The account's failed sign-ins are forgotten (its `login_throttle` row, keyed `user:<id>`): after a successful
 * sign-in, and after a reset — whoever holds the mailbox signs in at once, even while an attacker keeps it slowed down.
 */
export async function forgetFailedSignIns(db: Queryable, userId: string): Promise<void> {
  await db.query(`DELETE FROM login_throttle WHERE account = $1`, [`user:${userId}`]);
}

/** A successful sign-in: its attempt is taken back from the windows, and the account's failures are forgotten. */
async function forgetLoginAttempt(db: Db, email: string, client: string, userId: string): Promise<void> {
  const { account, address } = loginBuckets(email, client);
  await db.query(
    `UPDATE rate_windows SET count = count - 1
      WHERE bucket = ANY($1) AND window_start = date_trunc('minute', now()) AND count > 0`,
    [[account, address]],
  );
  await forgetFailedSignIns(db, userId);
}

/** Signs a user in: a new session (the route sets its cookie). */
export async function signIn(db: Db, userId: string): Promise<{ token: string; view: SignedInView }> {
  const view = await viewOf(db, userId);
  return { token: await createSession(db, userId, view.workspace.id), view };
}

/**
 * Checks the password and opens a session; the same answer and a similar time for an unknown e-mail. A hash made
 * with older parameters is replaced by one at today's after a successful check.
 */
export async function login(
  deps: AccountDeps,
  email: string,
  password: string,
  client: string,
): Promise<{ token: string; user: { user_id: string; workspace_id: string; email: string } }> {
  const { db, passwords } = deps;
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
}

export const logout = (deps: AccountDeps, token: string) => endSession(deps.db, token);
