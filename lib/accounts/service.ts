import { type BootstrapInput, bootstrapWorkspace } from './bootstrap';
import type { AccountDeps } from './deps';
import { acceptInvitation, invite, lookUpInvitation, revokeInvitation } from './invitations';
import { me, rename, renameWorkspace } from './profile';
import { changePassword, confirmPasswordReset, requestPasswordReset } from './reset';
import { listSeenKeys, rotateKeysSeen, setRotateOnDeparture } from './seen-keys';
import { login, logout } from './sign-in';
import { signUp } from './sign-up';
import { changeRole, listTeam, removeMember } from './team';
import { resendVerification, verifyEmail } from './verify';

export { type BootstrapInput, type BootstrapResult, bootstrapWorkspace } from './bootstrap';

/**
 * The account and team services as the routes call them (`services.accounts.login(email, password, client)`): each
 * operation lives in its own module (`sign-up.ts`, `sign-in.ts`, `verify.ts`, `reset.ts`, `invitations.ts`,
 * `team.ts`, …) as a function of the shared deps and its arguments; here they are given the deps.
 */
function bindTo(deps: AccountDeps) {
  return <A extends unknown[], R>(op: (deps: AccountDeps, ...args: A) => R) =>
    (...args: A): R =>
      op(deps, ...args);
}

/**
 * Accounts and sessions of the dashboard's people (`/v1/auth/*`): sign-up, sign-in, passwords, and joining a workspace
 * by invitation. Tokens sent by e-mail (resets, invitations) are credentials: random, kept as hashes, used once.
 */
export function createAccountService(deps: AccountDeps) {
  const bound = bindTo(deps);
  return {
    bootstrap: (input: BootstrapInput = {}) => bootstrapWorkspace(deps.db, deps.secrets, input),
    signup: bound(signUp),
    verifyEmail: bound(verifyEmail),
    resendVerification: bound(resendVerification),
    login: bound(login),
    logout: bound(logout),
    me: bound(me),
    rename: bound(rename),
    renameWorkspace: bound(renameWorkspace),
    changePassword: bound(changePassword),
    requestPasswordReset: bound(requestPasswordReset),
    confirmPasswordReset: bound(confirmPasswordReset),
    invitation: bound(lookUpInvitation),
    acceptInvitation: bound(acceptInvitation),
  };
}

/**
 * A workspace's people (docs/decisions/085-roles-and-team.md): members with roles, invitations by e-mail link, role
 * changes and removals. Who may do what beyond the route's roles is decided in `team.ts`, `invitations.ts` and
 * `seen-keys.ts`: an admin invites admins and operators and removes operators; only the owner changes roles and removes
 * admins; nobody removes the owner or themself. A person removed, or an admin made an operator, loses the builder keys
 * and pending invitations they issued, and the keys in force they were shown are listed to rotate, or rotated.
 */
export function createTeamService(deps: AccountDeps) {
  const bound = bindTo(deps);
  return {
    list: bound(listTeam),
    invite: bound(invite),
    revokeInvitation: bound(revokeInvitation),
    changeRole: bound(changeRole),
    remove: bound(removeMember),
    seenKeys: bound(listSeenKeys),
    rotateSeenKeys: bound(rotateKeysSeen),
    setRotateOnDeparture: bound(setRotateOnDeparture),
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
export type TeamService = ReturnType<typeof createTeamService>;
