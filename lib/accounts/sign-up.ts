import { withTransaction } from '../db';
import { LIMITS } from '../limits';
import { countOrRefuse } from './abuse';
import { createWorkspace } from './bootstrap';
import type { AccountDeps, LinkBase } from './deps';
import type { SignedInView } from './profile';
import { signIn } from './sign-in';
import { issueVerificationLink, sendVerificationLink } from './verify';

/**
 * A new workspace and its owner, signed in, with no credits until the owner confirms the address by the link
 * e-mailed now (not awaited). 409 `email_taken` for an e-mail that has an account.
 */
export async function signUp(
  deps: AccountDeps,
  input: { email: string; password: string; name?: string; workspace_name: string },
  client: string,
  linkBase: LinkBase,
): Promise<{ token: string; view: SignedInView }> {
  await countOrRefuse(
    deps.db,
    { [`signup-ip|${client}`]: LIMITS.account.signupsPerAddress },
    'sign-ups from this address',
  );
  const passwordHash = await deps.passwords.hash(input.password);
  const { userId, link } = await withTransaction(deps.db, async (tx) => {
    const created = await createWorkspace(tx, {
      name: input.workspace_name,
      email: input.email,
      passwordHash,
      ownerName: input.name,
      verified: false,
    });
    return { ...created, link: await issueVerificationLink(tx, created.userId, false) };
  });
  const signedIn = await signIn(deps.db, userId);
  sendVerificationLink(deps, signedIn.view, link, linkBase);
  return signedIn;
}
