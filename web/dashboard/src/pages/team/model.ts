import type { Member, Revoked } from '../../api/team';
import type { Role } from '../../../../shared/contract';

/**
 * The team page's rules apart from the DOM: what the signed-in role may do to a member (the contract's role rules:
 * only the owner changes roles; an admin removes operators, never the owner; nobody removes themself), what each role
 * may do, and what a removal or a demotion took with it, in words.
 */

export const ROLES: readonly Role[] = ['owner', 'admin', 'operator'];

export const ROLE_HELP: Record<Role, string> = {
  owner: 'Everything, including billing and the team',
  admin: 'Agents, keys, triggers, the team and the builder; reads billing',
  operator: 'The inbox: answers visitors who asked for a person',
};

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const canChangeRole = (me: Role, m: Pick<Member, 'you' | 'role'>) =>
  me === 'owner' && !m.you && m.role !== 'owner';

export const canRemove = (me: Role, m: Pick<Member, 'you' | 'role'>) =>
  !m.you && m.role !== 'owner' && (me === 'owner' || (me === 'admin' && m.role === 'operator'));

/** Admins can be invited by the owner and by admins. */
export const canInviteAdmins = (me: Role) => me === 'owner' || me === 'admin';

export const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** What a role change took with it, or undefined when nothing (the member did not become an operator). */
export function revokedOf(changed: Revoked): Revoked | undefined {
  const { revoked_builder_keys, revoked_invitations, keys_seen, rotated_keys } = changed;
  const revoked = { revoked_builder_keys, revoked_invitations, keys_seen, rotated_keys };
  return revoked_builder_keys || revoked_invitations || keys_seen.length || rotated_keys.length ? revoked : undefined;
}

/**
 * " 2 builder keys and 1 invitation they issued were revoked." and what of the keys they were shown: to rotate, or
 * rotated — or nothing when there was nothing.
 */
export function revokedText(revoked: Revoked | undefined): string {
  const keys = revoked?.revoked_builder_keys ?? 0;
  const invitations = revoked?.revoked_invitations ?? 0;
  const parts: string[] = [];
  if (keys) parts.push(plural(keys, 'builder key'));
  if (invitations) parts.push(plural(invitations, 'invitation'));
  const said = parts.length
    ? ` ${parts.join(' and ')} they issued ${keys + invitations === 1 ? 'was' : 'were'} revoked.`
    : '';
  const seen = revoked?.keys_seen.length ?? 0;
  const rotated = revoked?.rotated_keys.length ?? 0;
  if (rotated) return `${said} ${plural(rotated, 'key')} they saw ${rotated === 1 ? 'was' : 'were'} rotated.`;
  if (seen) return `${said} They were shown ${plural(seen, 'key')} that still work: rotate them under Keys to rotate.`;
  return said;
}
