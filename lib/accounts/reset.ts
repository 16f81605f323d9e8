import { type Queryable, withTransaction } from '../db';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';
import { hashKey, randomToken } from '../keys';
import { type Role, endOtherSessions } from '../sessions';
import { replaceWorkspaceKeys } from '../bots/service';
import { accountKey, countOrRefuse, countTokenUse, typedAddress } from './abuse';
import { type AccountDeps, type LinkBase, sendLater } from './deps';
import { sessionExpired } from './errors';
import type { SignedInView } from './profile';
import { forgetFailedSignIns, signIn } from './sign-in';
import { markEmailVerified } from './verify';

/** How long a password reset link works. */
const RESET_MINUTES = 60;

const resetLinkInvalid = () =>
  new ApiError('invalid_token', 'This reset link is unknown, already used or expired; ask for a new one');

/** The person's reset links not used yet stop working (a newer link, or a new password, wins). */
async function voidResetLinks(tx: Queryable, userId: string): Promise<void> {
  await tx.query(`UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [userId]);
}

/** A reset link for the account of `email`, if there is one: older links void, the new one e-mailed. */
async function sendResetLink(deps: AccountDeps, email: string, linkBase: LinkBase): Promise<void> {
  const res = await deps.db.query<{ id: string; email: string }>(
    `SELECT id, email FROM users WHERE lower(email) = lower($1)`,
    [typedAddress(email)],
  );
  const user = res.rows[0];
  if (!user) return;
  const token = randomToken(40);
  await withTransaction(deps.db, async (tx) => {
    await voidResetLinks(tx, user.id);
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

/**
 * Sends a reset link to the e-mail if it has an account. The answer is the same either way and comes before any
 * of that work (looking the account up, the token, the e-mail), so neither its content nor its time tells whether
 * the address has an account. A new link voids the ones sent before. Counted per client and per e-mail, so
 * nobody floods an inbox.
 */
export async function requestPasswordReset(
  deps: AccountDeps,
  email: string,
  client: string,
  linkBase: LinkBase,
): Promise<void> {
  await countOrRefuse(
    deps.db,
    {
      [`reset-ip|${client}`]: LIMITS.account.resetRequestsPerAddress,
      [`reset|${accountKey(email)}`]: LIMITS.account.resetRequestsPerAccount,
    },
    'password reset requests',
  );
  // Not awaited: a slow mail server must not tell an attacker which addresses have accounts. Lost only if this
  // process dies in the next moments; the person asks again.
  sendLater(deps, sendResetLink(deps, email, linkBase), 'password reset e-mail not sent');
}

/**
 * Sets a new password with a reset link's token (400 `invalid_token` if unknown, used or expired): the token is
 * spent, every session of the user ends, and a new one starts (the person is signed in). The token is looked at
 * before the new password is hashed, and uses are counted per client: a flood of made-up tokens costs no hashing.
 */
export async function confirmPasswordReset(
  deps: AccountDeps,
  token: string,
  password: string,
  client: string,
): Promise<{ token: string; view: SignedInView }> {
  const { db } = deps;
  await countTokenUse(db, 'reset-confirm', client);
  const known = await db.query(
    `SELECT 1 FROM password_resets WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()`,
    [hashKey(token)],
  );
  if (!known.rowCount) throw resetLinkInvalid();
  const passwordHash = await deps.passwords.hash(password);
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
    await voidResetLinks(tx, id);
    // The link reached them at their address: that proves the mailbox as a confirmation link would. If this is the
    // first proof, whoever held the account before did so without it: the keys they were shown stop.
    if ((await markEmailVerified(tx, id)) !== null && user.rows[0].role === 'owner') {
      await replaceWorkspaceKeys(tx, deps.secrets, user.rows[0].workspace_id);
    }
    // Whoever held the mailbox may sign in again at once, even while an attacker keeps the account slowed down.
    await forgetFailedSignIns(tx, id);
    await endOtherSessions(tx, id);
    return id;
  });
  return signIn(db, userId);
}

/**
 * Changes the signed-in user's password after checking the current one (401 `invalid_credentials`); every other
 * session of theirs ends (someone who knew the old password is signed out).
 */
export async function changePassword(
  deps: AccountDeps,
  session: { userId: string },
  currentToken: string,
  input: { current_password: string; new_password: string },
): Promise<void> {
  const { db, passwords } = deps;
  const res = await db.query<{ password_hash: string }>(`SELECT password_hash FROM users WHERE id = $1`, [
    session.userId,
  ]);
  const row = res.rows[0];
  if (!row) throw sessionExpired();
  if (!(await passwords.verify(input.current_password, row.password_hash)).ok) {
    throw new ApiError('invalid_credentials', 'The current password is wrong');
  }
  const passwordHash = await passwords.hash(input.new_password);
  await withTransaction(db, async (tx) => {
    await tx.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [session.userId, passwordHash]);
    // Reset links sent before stop working: whoever could read that mailbox does not get the account back.
    await voidResetLinks(tx, session.userId);
    await endOtherSessions(tx, session.userId, currentToken);
  });
}
