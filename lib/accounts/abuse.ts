import { createHash } from 'node:crypto';
import type { Queryable } from '../db';
import { LIMITS } from '../limits';
import { countInWindows } from '../rate-windows';
import { tooMany } from './errors';

/**
 * Counts one request in each bucket and refuses it past its limit (sign-ups and reset requests per client address,
 * resets per e-mail): the answer to an abuser is 429 before any work or any e-mail.
 */
export async function countOrRefuse(db: Queryable, limits: Record<string, number>, what: string): Promise<void> {
  const counted = await countInWindows(db, Object.keys(limits));
  const over = counted.find((w) => w.count > limits[w.bucket]);
  if (over) throw tooMany(`Too many ${what}; retry after ${over.reset} s`, over.reset);
}

/** Counts a use of an e-mailed token (reset, invitation, confirmation) by the client; 429 past the per-address limit. */
export const countTokenUse = (db: Queryable, what: string, client: string) =>
  countOrRefuse(db, { [`${what}|${client}`]: LIMITS.account.tokenUsesPerAddress }, 'attempts from this address');

/** The e-mail as typed, Unicode-normalised (NFKC: full-width letters become letters), without surrounding spaces. */
export const typedAddress = (email: string) => email.normalize('NFKC').trim();

/** The key an e-mail's counters share however it is typed (the sign-in and reset buckets). */
export const accountKey = (email: string) =>
  createHash('sha256').update(typedAddress(email).toLowerCase()).digest('base64url');
