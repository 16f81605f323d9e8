import type { BootstrapResult } from '../../lib/accounts/service';
import { newId } from '../../lib/ids';
import { randomToken } from '../../lib/keys';
import { hashPassword } from '../../lib/passwords';
import { http, testDb } from './helpers';

export interface Person {
  userId: string;
  email: string;
  password: string;
}

/**
 * A member (not the owner: an operator unless said) of a bot's workspace, with a password to sign in with; their
 * address counts as confirmed, as after accepting an invitation.
 */
export async function addMember(bot: BootstrapResult, role: 'admin' | 'operator' = 'operator'): Promise<Person> {
  const userId = newId('usr');
  const email = `member+${randomToken(8).toLowerCase()}@example.com`;
  const password = randomToken(16);
  await testDb().query(
    `INSERT INTO users (id, workspace_id, email, password_hash, role, email_verified_at) VALUES ($1, $2, $3, $4, $5, now())`,
    [userId, bot.workspace_id, email, await hashPassword(password), role],
  );
  return { userId, email, password };
}

/** Signs a person in; returns headers carrying the session cookie. */
export async function sessionOf(person: { email: string; password: string }, baseUrl?: string) {
  const res = await http('/v1/auth/login', { body: { email: person.email, password: person.password }, baseUrl });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return { Cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] };
}
