import type { EmailVerifiedView, InvitationPreview, Role, SignedInView } from '../../../shared/contract';
import { call } from './client';

/** Accounts and sessions: `/v1/auth/*`. The session is an HttpOnly cookie the API sets and clears. */

export type { Role } from '../../../shared/contract';
export type SignedIn = SignedInView;

/** Owners and admins manage agents, keys, the team, billing and the builder; operators work the inbox. */
export const isAdmin = (role: Role | undefined) => role === 'owner' || role === 'admin';

export const auth = {
  me: () => call<SignedIn>('GET', '/v1/auth/me'),
  login: (email: string, password: string) =>
    call<{ user_id: string; workspace_id: string; email: string }>('POST', '/v1/auth/login', { email, password }),
  logout: () => call<unknown>('POST', '/v1/auth/logout'),
  signup: (body: { email: string; password: string; name?: string; workspace_name: string }) =>
    call<SignedIn>('POST', '/v1/auth/signup', body),
  rename: (name: string) => call<SignedIn>('PATCH', '/v1/auth/me', { name }),
  renameWorkspace: (name: string) => call<SignedIn>('PATCH', '/v1/dashboard/workspace', { name }),
  changePassword: (current_password: string, new_password: string) =>
    call<{ status: 'changed' }>('POST', '/v1/auth/password', { current_password, new_password }),
  requestReset: (email: string) => call<{ status: 'sent' }>('POST', '/v1/auth/password-reset', { email }),
  confirmReset: (token: string, password: string) =>
    call<SignedIn>('POST', '/v1/auth/password-reset/confirm', { token, password }),
  // Tokens in the body, never in a path an access log records.
  verifyEmail: (token: string) => call<EmailVerifiedView>('POST', '/v1/auth/verify-email', { token }),
  resendVerification: () => call<{ status: 'sent' }>('POST', '/v1/auth/verify-email/resend'),
  invitation: (token: string) => call<InvitationPreview>('POST', '/v1/auth/invitation', { token }),
  acceptInvitation: (token: string, body: { password: string; name?: string }) =>
    call<SignedIn>('POST', '/v1/auth/invitation/accept', { token, ...body }),
};
