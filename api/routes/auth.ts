import { publicAddress } from '../../lib/config';
import { SESSION_DAYS, sessionCookie } from '../../lib/sessions';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { ALL_ROLES, MANAGERS, type RouteDef, route } from '../route';
import {
  AcceptInvitation,
  AcceptInvitationWithToken,
  EmailVerificationRequest,
  EmailVerified,
  InvitationToken,
  InvitationView,
  LoginRequest,
  LoginResponse,
  MeResponse,
  PasswordChangeRequest,
  ProfileUpdate,
  WorkspaceUpdate,
  PasswordResetConfirm,
  PasswordResetRequest,
  SignupRequest,
  StatusResponse,
  TokenParams,
} from '../../lib/schemas/auth';
import { dashboardLinkBase, sessionUser } from '../session';
import { clientBucket } from '../../lib/client-address';
import { LIMITS } from '../../lib/limits';

/** The invitation routes with the token in the path give way to the ones with it in the body. */
const INVITATION_PATH_DEPRECATION = {
  since: new Date('2026-11-25T00:00:00Z'),
  sunset: new Date('2027-05-25T00:00:00Z'),
};

/**
 * The session cookie (HttpOnly, SameSite=Lax; `sessionCookie` names it). With an https public address it is
 * `__Host-ap_session` and always Secure, even when TLS ends at a balancer the API does not trust for
 * X-Forwarded-Proto; otherwise Secure exactly when the request arrived over https (the cookie library refuses a
 * Secure cookie on a request it sees as plain HTTP, hence `cookies.secure` set by us only in the first case).
 */
function setSessionCookie(ctx: AppContext, deps: AppDeps, token: string): void {
  const cookie = sessionCookie(publicAddress(deps.config));
  if (cookie.alwaysSecure) ctx.cookies.secure = true;
  ctx.cookies.set(cookie.name, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: cookie.alwaysSecure || ctx.secure,
    maxAge: SESSION_DAYS * 86_400_000,
    path: '/',
  });
}

const sessionCookieName = (deps: AppDeps) => sessionCookie(publicAddress(deps.config)).name;

/**
 * `/v1/auth/*` (contract: login is `POST /v1/auth/login`; the rest is ours, docs/decisions/084-accounts.md):
 * sign-up, sessions, passwords and invitations.
 */
export function authRoutes(deps: AppDeps): RouteDef[] {
  return [...sessionRoutes(deps), ...emailedTokenRoutes(deps)];
}

/** Signing up, in and out, the signed-in person and their workspace, the password. */
function sessionRoutes(deps: AppDeps): RouteDef[] {
  const { accounts } = deps.services;
  const common = { tag: 'Account', unstable: true } as const;
  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/signup',
      operationId: 'signup',
      summary: 'Creates a workspace and its owner, and signs the owner in (sets the session cookie).',
      description:
        'The workspace starts on the Free plan with no credits: its included credits are granted when the owner ' +
        'confirms the e-mail address by the link e-mailed now (`POST /v1/auth/verify-email`). 409 `email_taken` for ' +
        `an e-mail that has an account; ${LIMITS.account.signupsPerAddress} sign-ups a minute per client address.`,
      body: SignupRequest,
      responses: { 201: { description: 'Signed up and signed in', schema: MeResponse } },
      errors: ['bad_request', 'email_taken', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, view } = await accounts.signup(body, clientBucket(ctx.ip), dashboardLinkBase(deps));
        setSessionCookie(ctx, deps, token);
        return view;
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/login',
      operationId: 'login',
      summary: 'Signs a dashboard user in; sets the session cookie.',
      body: LoginRequest,
      responses: { 200: { description: 'Signed in', schema: LoginResponse } },
      errors: ['bad_request', 'invalid_credentials', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, user } = await accounts.login(body.email, body.password, clientBucket(ctx.ip));
        setSessionCookie(ctx, deps, token);
        return user;
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/auth/me',
      operationId: 'me',
      summary: 'The signed-in user (id, e-mail, name, role) and their workspace; 401 `unauthorized` without a session.',
      session: true,
      roles: ALL_ROLES,
      responses: { 200: { description: 'Signed-in user', schema: MeResponse } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'no-store');
        return await accounts.me(sessionUser(ctx));
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/auth/me',
      operationId: 'updateMe',
      summary: "Changes the signed-in person's own name; answers as `GET /v1/auth/me`.",
      session: true,
      roles: ALL_ROLES,
      body: ProfileUpdate,
      responses: { 200: { description: 'Signed-in user', schema: MeResponse } },
      errors: ['unauthorized', 'bad_request', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        return await accounts.rename(sessionUser(ctx), body.name);
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/dashboard/workspace',
      operationId: 'updateWorkspace',
      summary: "Renames the signed-in person's workspace (owners and admins); answers as `GET /v1/auth/me`.",
      session: true,
      roles: MANAGERS,
      body: WorkspaceUpdate,
      responses: { 200: { description: 'Signed-in user', schema: MeResponse } },
      errors: ['unauthorized', 'forbidden', 'bad_request', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        return await accounts.renameWorkspace(sessionUser(ctx), body.name);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'logout',
      summary: 'Ends the session.',
      responses: { 200: { description: 'Signed out', schema: StatusResponse } },
      handler: async (ctx) => {
        const token = ctx.cookies.get(sessionCookieName(deps));
        if (token) await accounts.logout(token);
        const cookie = sessionCookie(publicAddress(deps.config));
        if (cookie.alwaysSecure) ctx.cookies.secure = true;
        ctx.cookies.set(cookie.name, '', { maxAge: 0, path: '/', secure: cookie.alwaysSecure || ctx.secure });
        return { status: 'signed_out' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/password',
      operationId: 'changePassword',
      summary: "Changes the signed-in user's password (the current one is checked); their other sessions end.",
      session: true,
      roles: ALL_ROLES,
      body: PasswordChangeRequest,
      responses: { 200: { description: 'Changed', schema: StatusResponse } },
      errors: ['bad_request', 'unauthorized', 'invalid_credentials', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        await accounts.changePassword(sessionUser(ctx), ctx.cookies.get(sessionCookieName(deps)) ?? '', body);
        return { status: 'changed' };
      },
    }),
  ];
}

/** What an e-mailed link completes: a password reset, an address confirmation, an invitation. */
function emailedTokenRoutes(deps: AppDeps): RouteDef[] {
  const { accounts } = deps.services;
  const common = { tag: 'Account', unstable: true } as const;
  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/password-reset',
      operationId: 'requestPasswordReset',
      summary:
        'E-mails a password reset link (valid one hour) if the address has an account; the same answer either way.',
      description:
        'Without `SMTP_URL` the e-mail, link included, is written to the API log instead (development set-ups; README).',
      body: PasswordResetRequest,
      responses: { 202: { description: 'Sent if the account exists', schema: StatusResponse } },
      errors: ['bad_request', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        await accounts.requestPasswordReset(body.email, clientBucket(ctx.ip), dashboardLinkBase(deps));
        return { status: 'sent' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/password-reset/confirm',
      operationId: 'confirmPasswordReset',
      summary: "Sets a new password with a reset link's token; every session ends and the person is signed in anew.",
      body: PasswordResetConfirm,
      responses: { 200: { description: 'Password set, signed in', schema: MeResponse } },
      errors: ['bad_request', 'invalid_token', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, view } = await accounts.confirmPasswordReset(body.token, body.password, clientBucket(ctx.ip));
        setSessionCookie(ctx, deps, token);
        return view;
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/verify-email',
      operationId: 'verifyEmail',
      summary:
        "Confirms an e-mail address with its link's token; a sign-up's workspace then gets its included credits, once.",
      description:
        'The link (`{dashboard}/verify-email#token=…`, valid 48 hours; a newer link replaces it) is e-mailed at sign-up ' +
        'and on `POST /v1/auth/verify-email/resend`. Following it again answers 200 with `credits_granted: 0`. ' +
        `400 \`invalid_token\` for an unknown, expired or replaced link; ${LIMITS.account.tokenUsesPerAddress} a minute per client address.`,
      body: EmailVerificationRequest,
      responses: { 200: { description: 'Confirmed', schema: EmailVerified } },
      errors: ['bad_request', 'invalid_token', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        ctx.set('Cache-Control', 'no-store');
        return await accounts.verifyEmail(body.token, clientBucket(ctx.ip));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/verify-email/resend',
      operationId: 'resendEmailVerification',
      summary: 'E-mails the signed-in person a new link confirming their address; the links sent before stop working.',
      description:
        `409 \`conflict\` once the address is confirmed; ${LIMITS.account.verificationResendsPerHour} new links an hour ` +
        'per person (429 with `Retry-After`). The answer does not wait for the mail server.',
      session: true,
      roles: ALL_ROLES,
      responses: { 202: { description: 'A new link is on its way', schema: StatusResponse } },
      errors: ['unauthorized', 'conflict', 'rate_limited', 'service_unavailable'],
      handler: async (ctx) => {
        await accounts.resendVerification(sessionUser(ctx), dashboardLinkBase(deps));
        return { status: 'sent' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/invitation',
      operationId: 'invitation',
      summary: 'What an invitation link offers (workspace, role, e-mail); 404 when unknown, used, revoked or expired.',
      description:
        'The token travels in the body, never in a path an access log records. ' +
        `${LIMITS.account.tokenUsesPerAddress} look-ups and acceptances a minute per client address.`,
      body: InvitationToken,
      responses: { 200: { description: 'Invitation', schema: InvitationView } },
      errors: ['bad_request', 'not_found', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        ctx.set('Cache-Control', 'no-store');
        return await accounts.invitation(body.token, clientBucket(ctx.ip));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/invitation/accept',
      operationId: 'acceptInvitation',
      summary: 'Joins the workspace with the role the invitation names, with a new password; signs the person in.',
      description: '409 `email_taken` when the e-mail has an account already (an account belongs to one workspace).',
      body: AcceptInvitationWithToken,
      responses: { 201: { description: 'Joined and signed in', schema: MeResponse } },
      errors: ['bad_request', 'not_found', 'email_taken', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token: invitationToken, ...input } = body;
        const { token, view } = await accounts.acceptInvitation(invitationToken, input, clientBucket(ctx.ip));
        setSessionCookie(ctx, deps, token);
        return view;
      },
    }),
    // The first shape, with the token in the path (recorded by access logs and proxies on the way): answered until
    // its sunset for links already sent; the access log writes the route template instead of the path.
    route({
      ...common,
      method: 'get',
      path: '/v1/auth/invitations/{token}',
      operationId: 'invitationByPath',
      summary: 'Deprecated: `POST /v1/auth/invitation` with the token in the body.',
      deprecated: INVITATION_PATH_DEPRECATION,
      params: TokenParams,
      responses: { 200: { description: 'Invitation', schema: InvitationView } },
      errors: ['bad_request', 'not_found', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        ctx.set('Cache-Control', 'no-store');
        return await accounts.invitation(params.token, clientBucket(ctx.ip));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/invitations/{token}/accept',
      operationId: 'acceptInvitationByPath',
      summary: 'Deprecated: `POST /v1/auth/invitation/accept` with the token in the body.',
      deprecated: INVITATION_PATH_DEPRECATION,
      params: TokenParams,
      body: AcceptInvitation,
      responses: { 201: { description: 'Joined and signed in', schema: MeResponse } },
      errors: ['bad_request', 'not_found', 'email_taken', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { params, body }) => {
        const { token, view } = await accounts.acceptInvitation(params.token, body, clientBucket(ctx.ip));
        setSessionCookie(ctx, deps, token);
        return view;
      },
    }),
  ];
}
