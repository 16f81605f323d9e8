import { z } from 'zod';
import { LIMITS } from '../limits';
import { NOT_BLANK } from '../text';

const { passwordMinChars, passwordMaxChars, nameChars, workspaceNameChars } = LIMITS.account;

export const Email = z
  .string({ error: 'is required' })
  .trim()
  .max(320)
  .pipe(z.email({ error: 'must be an e-mail address' }));
/** A new password: long enough to resist guessing (NIST 800-63B favours length over composition rules). */
export const NewPassword = z
  .string({ error: 'is required' })
  .min(passwordMinChars, `must be at least ${passwordMinChars} characters`)
  .max(passwordMaxChars, `must be at most ${passwordMaxChars} characters`);
const PersonName = z.string().trim().max(nameChars).optional().describe('How teammates see this person');
const Token = z.string().min(10).max(200);
const Role = z.enum(['owner', 'admin', 'operator']);

export const LoginRequest = z
  .object({ email: z.string().min(3).max(320), password: z.string().min(1).max(1000) })
  .meta({ id: 'LoginRequest' });
export const LoginResponse = z
  .object({ user_id: z.string(), workspace_id: z.string(), email: z.string() })
  .meta({ id: 'LoginResponse' });
export const MeResponse = z
  .object({
    user: z.object({
      id: z.string(),
      email: z.string(),
      name: z.string().nullable(),
      role: Role,
      email_verified: z
        .boolean()
        .describe('Whether the person confirmed their e-mail address (by its link, an invitation or a reset)'),
    }),
    workspace: z.object({
      id: z.string(),
      name: z.string(),
      credits_awaiting_confirmation: z
        .number()
        .int()
        .describe("The included credits the owner's confirmation of their e-mail address will grant; 0 when none wait"),
    }),
  })
  .meta({ id: 'SignedInUser' });

export const SignupRequest = z
  .object({
    email: Email,
    password: NewPassword,
    name: PersonName,
    workspace_name: z
      .string({ error: 'is required' })
      .regex(NOT_BLANK, 'must not be empty')
      .trim()
      .max(workspaceNameChars)
      .describe('The name of the new workspace (a company, a team)'),
  })
  .meta({ id: 'SignupRequest' });

export const ProfileUpdate = z
  .object({
    name: z
      .string({ error: 'is required' })
      .trim()
      .max(nameChars)
      .describe('How teammates (and, by its first word, visitors) see this person; empty removes it'),
  })
  .meta({ id: 'ProfileUpdate' });

export const WorkspaceUpdate = z
  .object({
    name: z.string({ error: 'is required' }).regex(NOT_BLANK, 'must not be empty').trim().max(workspaceNameChars),
  })
  .meta({ id: 'WorkspaceUpdate' });

export const PasswordChangeRequest = z
  .object({ current_password: z.string().min(1).max(passwordMaxChars), new_password: NewPassword })
  .meta({ id: 'PasswordChangeRequest' });
export const PasswordResetRequest = z
  .object({ email: z.string().trim().min(3).max(320) })
  .meta({ id: 'PasswordResetRequest' });
export const PasswordResetConfirm = z
  .object({ token: Token, password: NewPassword })
  .meta({ id: 'PasswordResetConfirm' });

export const TokenParams = z.object({ token: Token });
export const InvitationView = z
  .object({
    email: z.string(),
    role: z.enum(['admin', 'operator']),
    workspace: z.object({ name: z.string() }),
    invited_by: z.string().nullable(),
  })
  .meta({ id: 'InvitationPreview' });
export const AcceptInvitation = z.object({ password: NewPassword, name: PersonName }).meta({ id: 'AcceptInvitation' });
export const InvitationToken = z.object({ token: Token }).meta({ id: 'InvitationToken' });
export const AcceptInvitationWithToken = z
  .object({ token: Token, password: NewPassword, name: PersonName })
  .meta({ id: 'AcceptInvitationWithToken' });
export const EmailVerificationRequest = z.object({ token: Token }).meta({ id: 'EmailVerificationRequest' });
export const EmailVerified = z
  .object({
    status: z.literal('verified'),
    email: z.string(),
    credits_granted: z
      .number()
      .int()
      .describe('Included credits this confirmation granted the workspace (0 when it was confirmed before)'),
  })
  .meta({ id: 'EmailVerified' });
export const StatusResponse = z.object({ status: z.string() }).meta({ id: 'Status' });
