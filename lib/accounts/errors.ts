import { ApiError } from '../errors';

/** The person of the session is gone (removed from the team): sign in again. */
export const sessionExpired = () => new ApiError('unauthorized', 'The session expired; sign in again');

export const forbidden = (message: string) => new ApiError('forbidden', message);

/** 429 `rate_limited`, with `Retry-After` in seconds. */
export function tooMany(message: string, reset: number): ApiError {
  return new ApiError('rate_limited', message, {}, { 'Retry-After': String(reset) });
}

const emailTaken = () =>
  new ApiError('email_taken', 'An account with this e-mail already exists; sign in, or reset its password');

/**
 * Awaits the insert of a person's row: an e-mail that has an account already (the unique index; an account belongs to
 * one workspace, docs/decisions/084-accounts.md) is 409 `email_taken`.
 */
export async function unlessEmailTaken<T>(insert: Promise<T>): Promise<T> {
  try {
    return await insert;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw emailTaken();
    throw err;
  }
}
