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
