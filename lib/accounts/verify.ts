import { type Queryable, withTransaction } from '../db';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import { hashKey, randomToken } from '../keys';
import type { Role } from '../sessions';
import { grantMonthsIncludedCredits } from '../billing/service';
import { countTokenUse } from './abuse';
import { type AccountDeps, type LinkBase, sendLater } from './deps';
import { sessionExpired, tooMany } from './errors';
import { type SignedInView, viewOf } from './profile';

/** How long a link confirming an e-mail address works. */
const VERIFICATION_HOURS = 48;

const verificationLinkInvalid = () =>
  new ApiError(
    'invalid_token',
    'This confirmation link is unknown, expired or replaced by a newer one; ask for a new one',
  );

/**
 * A new link confirming a person's address, in the caller's transaction: the links sent before stop working (only the
 * newest one in the mailbox works, as with resets). The token, shown once (in the e-mail).
 */
export async function issueVerificationLink(tx: Queryable, userId: string, resend: boolean): Promise<string> {
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
 * E-mails a link confirming the person's address. The subject and the text are ours alone (the workspace's and the
 * person's names are user-chosen text a phishing message would want to place); the token rides in the fragment.
 */
async function mailVerificationLink(deps: AccountDeps, view: SignedInView, token: string, linkBase: LinkBase) {
  const { email } = view.user;
  const awaiting = view.workspace.credits_awaiting_confirmation;
  const link = `${linkBase}/verify-email#token=${token}`;
  const credits =
    awaiting > 0
      ? `Confirm it to receive your workspace's ${awaiting.toLocaleString('en-US')} included credits:\n`
      : 'Confirm it here:\n';
  await deps.outbox.send(
    email,
    'Confirm your e-mail address for Agent Platform',
    `Someone created an Agent Platform account for ${email}.\n\n${credits}${link}\n\n` +
      `The link works for ${VERIFICATION_HOURS} hours. If it was not you, ignore this message.`,
  );
}

/** Sends the confirmation link to the person `view` shows, after the answer (sendLater). */
export const sendVerificationLink = (deps: AccountDeps, view: SignedInView, token: string, linkBase: LinkBase) =>
  sendLater(deps, mailVerificationLink(deps, view, token, linkBase), 'e-mail confirmation not sent');

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
  throw tooMany(`${count} confirmation links were sent in the last hour; retry after ${wait} s`, wait);
}

/**
 * The person proved they read the mailbox of their address (a confirmation link, an invitation, a password reset):
 * marked verified once, their confirmation links spent, and — for a workspace's owner — the month's included credits
 * their workspace was waiting for, granted in the caller's transaction. The credits granted; null when the person was
 * verified already. The row lock of the UPDATE makes two proofs at once take turns: the second finds them verified.
 */
export async function markEmailVerified(tx: Queryable, userId: string): Promise<number | null> {
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

/**
 * Confirms an e-mail address with the token of its link (400 `invalid_token` if unknown, expired or replaced by a
 * newer link): the person is verified and, for an owner, the workspace gets the month's included credits — in one
 * transaction, once however often the link is followed. A link of a person verified already answers 200 again and
 * grants nothing (a double click, a second tab). Uses are counted per client, as other tokens are.
 */
export async function verifyEmail(
  deps: AccountDeps,
  token: string,
  client: string,
): Promise<{ status: 'verified'; email: string; credits_granted: number }> {
  await countTokenUse(deps.db, 'verify-email', client);
  return withTransaction(deps.db, async (tx) => {
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
}

/**
 * A new confirmation link for the signed-in person, whose address is not confirmed yet (409 `conflict` once it
 * is): the older links stop working; 429 past the resends of an hour. The e-mail is not awaited.
 */
export async function resendVerification(
  deps: AccountDeps,
  session: { userId: string },
  linkBase: LinkBase,
): Promise<void> {
  const link = await withTransaction(deps.db, async (tx) => {
    const res = await tx.query<{ verified: boolean }>(
      `SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1 FOR UPDATE`,
      [session.userId],
    );
    if (!res.rows[0]) throw sessionExpired();
    if (res.rows[0].verified) throw errors.conflict('Your e-mail address is confirmed already');
    await refuseOverResendLimit(tx, session.userId);
    return issueVerificationLink(tx, session.userId, true);
  });
  sendVerificationLink(deps, await viewOf(deps.db, session.userId), link, linkBase);
}
