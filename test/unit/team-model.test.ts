/** The team page's rules, apart from the page (web/dashboard/src/pages/team/model.ts). */
import { describe, expect, it, jest } from '@jest/globals';

/** Typed by what the test uses of it (the dashboard's files import each other without extensions; see hours-model). */
type Role = 'owner' | 'admin' | 'operator';
type Revoked = {
  revoked_builder_keys: number;
  revoked_invitations: number;
  keys_seen: unknown[];
  rotated_keys: unknown[];
};
const { canChangeRole, canRemove, canInviteAdmins, revokedOf, revokedText } = jest.requireActual<{
  canChangeRole(me: Role, m: { you: boolean; role: Role }): boolean;
  canRemove(me: Role, m: { you: boolean; role: Role }): boolean;
  canInviteAdmins(me: Role): boolean;
  revokedOf(changed: Revoked & Record<string, unknown>): Revoked | undefined;
  revokedText(revoked: Revoked | undefined): string;
}>('../../web/dashboard/src/pages/team/model');

const none: Revoked = { revoked_builder_keys: 0, revoked_invitations: 0, keys_seen: [], rotated_keys: [] };

describe('the team page, apart from the page', () => {
  it('draws only what the role may do: the owner changes roles; admins remove operators; nobody the owner or themself', () => {
    const member = (role: Role, you = false) => ({ role, you });
    expect(canChangeRole('owner', member('admin'))).toBe(true);
    expect(canChangeRole('owner', member('owner', true))).toBe(false);
    expect(canChangeRole('admin', member('operator'))).toBe(false);
    expect(canRemove('owner', member('admin'))).toBe(true);
    expect(canRemove('admin', member('operator'))).toBe(true);
    expect(canRemove('admin', member('admin'))).toBe(false);
    expect(canRemove('operator', member('operator'))).toBe(false);
    expect(canRemove('owner', member('operator', true))).toBe(false);
    expect(canInviteAdmins('admin')).toBe(true);
    expect(canInviteAdmins('operator')).toBe(false);
  });

  it('says what a removal or a demotion took with it, and nothing when nothing', () => {
    expect(revokedText(undefined)).toBe('');
    expect(revokedText({ ...none, revoked_builder_keys: 2, revoked_invitations: 1 })).toBe(
      ' 2 builder keys and 1 invitation they issued were revoked.',
    );
    expect(revokedText({ ...none, keys_seen: [{}] })).toBe(
      ' They were shown 1 key that still work: rotate them under Keys to rotate.',
    );
    expect(revokedText({ ...none, revoked_invitations: 1, rotated_keys: [{}, {}] })).toBe(
      ' 1 invitation they issued was revoked. 2 keys they saw were rotated.',
    );
    expect(revokedOf({ ...none, id: 'usr_1', role: 'admin' })).toBeUndefined();
    expect(revokedOf({ ...none, id: 'usr_1', role: 'operator', revoked_builder_keys: 1 })).toEqual({
      ...none,
      revoked_builder_keys: 1,
    });
  });
});
