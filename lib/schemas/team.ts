import { z } from 'zod';
import { Email } from './auth';

const Role = z.enum(['owner', 'admin', 'operator']);
const InvitedRole = z.enum(['admin', 'operator']);

export const Member = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: Role,
    created_at: z.number().int(),
    you: z.boolean().describe('This is the signed-in user'),
  })
  .meta({ id: 'TeamMember' });

export const Invitation = z
  .object({
    id: z.string(),
    email: z.string(),
    role: InvitedRole,
    created_at: z.number().int(),
    expires_at: z.number().int(),
    invited_by: z.string().nullable(),
  })
  .meta({ id: 'Invitation' });

export const TeamView = z
  .object({ members: z.array(Member), invitations: z.array(Invitation).describe('Pending invitations') })
  .meta({ id: 'Team' });

export const InviteRequest = z.object({ email: Email, role: InvitedRole }).meta({ id: 'InviteRequest' });
export const InviteResponse = z
  .object({
    invitation: Invitation,
    invite_url: z.string().describe('The link to accept it (also e-mailed when SMTP is configured); works once'),
    emailed: z.boolean().describe('false when SMTP is not configured: pass the link on yourself'),
  })
  .meta({ id: 'InviteResult' });
export const RoleChange = z.object({ role: InvitedRole }).meta({ id: 'RoleChange' });
export const MemberParams = z.object({ uid: z.string().min(1).max(64) });
export const InvitationParams = z.object({ iid: z.string().min(1).max(64) });

const KeyKind = z.enum(['secret', 'identity', 'webhook', 'builder']);

/** A key in force that someone who left the team, or is an operator now, was shown (docs/decisions/142-keys-outlive-holders.md). */
export const SeenKey = z
  .object({
    bot_id: z.string().nullable().describe("The agent whose key it is; null for a builder key of the workspace's"),
    bot_name: z.string().nullable(),
    kind: KeyKind.describe('`secret` (sk_), `identity` (idsec_), `webhook` (whsec_), `builder` (ck_)'),
    fingerprint: z.string().describe('Of the key they saw, which still works: never the key'),
    shown_at: z.number().int().describe('When they created or reissued it (and so were shown it)'),
    seen_by: z.object({
      id: z.string(),
      email: z.string(),
      now: z.enum(['removed', 'operator']).describe('Removed from the team, or made an operator'),
    }),
  })
  .meta({ id: 'SeenKey' });
export const RotatedKey = z
  .object({
    bot_id: z.string().nullable(),
    bot_name: z.string().nullable(),
    kind: KeyKind,
    fingerprint: z.string().describe("The new key's; the revoked one's for a builder key"),
    key: z
      .string()
      .nullable()
      .describe(
        'The new key, shown only in this answer; null for a builder key, which is revoked (reissue one if needed)',
      ),
  })
  .meta({ id: 'RotatedKey' });

/** What a removal or a demotion took with it (docs/decisions/106-builder-key-issuers.md). */
const RevokedCounts = {
  revoked_builder_keys: z.number().int().describe('Builder keys this person had issued, now revoked'),
  revoked_invitations: z.number().int().describe('Pending invitations this person had sent, now revoked'),
  keys_seen: z
    .array(SeenKey)
    .describe(
      'The keys still in force this person was shown: rotate them (`POST /v1/dashboard/team/seen-keys/rotate`)',
    ),
  rotated_keys: z
    .array(RotatedKey)
    .describe("Rotated at once by the workspace's `rotate_keys_on_departure`: the new values, shown only here"),
};
export const MemberChanged = Member.extend({
  ...RevokedCounts,
}).meta({ id: 'TeamMemberChanged', description: 'Counts and lists are empty unless the member became an operator.' });
export const MemberRemoved = z
  .object({ status: z.literal('removed'), ...RevokedCounts })
  .meta({ id: 'TeamMemberRemoved' });

export const BuilderKey = z
  .object({
    id: z.string(),
    fingerprint: z.string().describe('`ck_…abcd`: the key itself is never shown again'),
    label: z.string().nullable().describe("The device (a paired client's name) or the surface it was issued from"),
    issued_via: z.string().nullable().describe('`pairing`, `builder` (the builder panel), `dashboard`, `agentctl`'),
    bot_id: z.string().nullable().describe("The agent whose own builder key it is; null for the workspace's"),
    bot_name: z.string().nullable(),
    issued_by: z
      .object({ id: z.string(), email: z.string(), name: z.string().nullable() })
      .nullable()
      .describe('Who issued it; null for an API call, agentctl, or a key older than this record'),
    created_at: z.number().int(),
    last_used_at: z.number().int().nullable().describe('To the minute; null when not used since it was recorded'),
  })
  .meta({ id: 'BuilderKey' });
export const BuilderKeyList = z.object({ builder_keys: z.array(BuilderKey) }).meta({ id: 'BuilderKeyList' });
export const BuilderKeyParams = z.object({ kid: z.string().min(1).max(64) });

export const SeenKeyList = z
  .object({
    seen_keys: z.array(SeenKey),
    rotate_keys_on_departure: z
      .boolean()
      .describe('Whether the keys a departing person saw are rotated at once (otherwise they are listed here)'),
  })
  .meta({ id: 'SeenKeyList' });
export const RotateSeenKeys = z
  .object({ user_id: z.string().min(1).max(64).optional().describe('Only the keys this person saw; all when absent') })
  .meta({ id: 'RotateSeenKeys' });
export const RotatedKeys = z.object({ rotated: z.array(RotatedKey) }).meta({ id: 'RotatedKeys' });
export const DepartureSetting = z.object({ rotate_keys_on_departure: z.boolean() }).meta({ id: 'DepartureSetting' });
