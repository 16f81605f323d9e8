import type {
  BuilderKey,
  InviteResult,
  Invitation,
  InvitedRole,
  MemberChanged,
  MemberRemoved,
  RotatedKey,
  SeenKey,
  TeamMember,
} from '../../../shared/contract';
import { call, seg } from './client';

/** The workspace's people, invitations, builder keys, and the keys people who left saw: `/v1/dashboard/team…`. */

export type { BuilderKey, Invitation, InvitedRole, RotatedKey, SeenKey } from '../../../shared/contract';
export type Member = TeamMember;

/**
 * What a removal or a demotion took with it: the builder keys and pending invitations the person had issued, the keys
 * in force they were shown (to rotate), or those rotated at once by the workspace's setting (new values, shown once).
 */
export type Revoked = Omit<MemberRemoved, 'status'>;

export const teamApi = {
  list: () => call<{ members: Member[]; invitations: Invitation[] }>('GET', '/v1/dashboard/team'),
  invite: (email: string, role: InvitedRole) =>
    call<InviteResult>('POST', '/v1/dashboard/team/invitations', { email, role }),
  revoke: (id: string) => call<{ status: string }>('DELETE', `/v1/dashboard/team/invitations/${seg(id)}`),
  setRole: (uid: string, role: InvitedRole) =>
    call<MemberChanged>('PATCH', `/v1/dashboard/team/members/${seg(uid)}`, { role }),
  remove: (uid: string) => call<MemberRemoved>('DELETE', `/v1/dashboard/team/members/${seg(uid)}`),
  builderKeys: () => call<{ builder_keys: BuilderKey[] }>('GET', '/v1/dashboard/team/builder-keys'),
  revokeBuilderKey: (id: string) => call<{ status: string }>('DELETE', `/v1/dashboard/team/builder-keys/${seg(id)}`),
  seenKeys: () =>
    call<{ seen_keys: SeenKey[]; rotate_keys_on_departure: boolean }>('GET', '/v1/dashboard/team/seen-keys'),
  /** Rotates the keys in force that people who left saw (one person's with `userId`); idempotent. */
  rotateSeenKeys: (userId?: string) =>
    call<{ rotated: RotatedKey[] }>('POST', '/v1/dashboard/team/seen-keys/rotate', userId ? { user_id: userId } : {}),
  setRotateOnDeparture: (rotate: boolean) =>
    call<{ rotate_keys_on_departure: boolean }>('PUT', '/v1/dashboard/team/seen-keys/settings', {
      rotate_keys_on_departure: rotate,
    }),
};
