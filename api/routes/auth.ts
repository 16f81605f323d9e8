import { SESSION_COOKIE, SESSION_DAYS } from '../../lib/sessions';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { ALL_ROLES, type RouteDef, route } from '../route';
import {
  AcceptInvitation,
  InvitationView,
  LoginRequest,
  LoginResponse,
  MeResponse,
  PasswordChangeRequest,
  PasswordResetConfirm,
  PasswordResetRequest,
  SignupRequest,
  StatusResponse,
  TokenParams,
} from '../../lib/schemas/auth';
import { dashboardLinkBase, sessionUser } from '../session';

/**
 * The session cookie (`ap_session`: HttpOnly, SameSite=Lax). Secure exactly when the request arrived over https, as
 * seen through trusted proxies (X-Forwarded-Proto with TRUST_PROXY): a Secure cookie on a request seen as plain HTTP is
 * refused by the cookie library (a 500).
 */
function setSessionCookie(ctx: AppContext, token: string): void {
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.secure,
    maxAge: SESSION_DAYS * 86_400_000,
    path: '/',
  });
}

/**
 * `/v1/auth/*` (spec: login is `POST /v1/auth/login`; the rest is ours, docs/decisions.md "The dashboard: accounts,
 * team, billing"): sign-up, sessions, passwords and invitations.
 */
export function authRoutes(deps: AppDeps): RouteDef[] {
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
        'The workspace starts on the Free plan with its included credits. 409 `email_taken` for an e-mail that has an account.',
      body: SignupRequest,
      responses: { 201: { description: 'Signed up and signed in', schema: MeResponse } },
      errors: ['bad_request', 'email_taken', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, view } = await accounts.signup(body, ctx.ip);
        setSessionCookie(ctx, token);
        ctx.status = 201;
        ctx.body = view;
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
        const { token, user } = await accounts.login(body.email, body.password, ctx.ip);
        setSessionCookie(ctx, token);
        ctx.body = user;
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
        ctx.body = await accounts.me(sessionUser(ctx));
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
        const token = ctx.cookies.get(SESSION_COOKIE);
        if (token) await accounts.logout(token);
        ctx.cookies.set(SESSION_COOKIE, '', { maxAge: 0, path: '/' });
        ctx.body = { status: 'signed_out' };
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
        await accounts.changePassword(sessionUser(ctx), ctx.cookies.get(SESSION_COOKIE) ?? '', body);
        ctx.body = { status: 'changed' };
      },
    }),
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
        await accounts.requestPasswordReset(body.email, ctx.ip, dashboardLinkBase(deps));
        ctx.status = 202;
        ctx.body = { status: 'sent' };
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
      errors: ['bad_request', 'invalid_token', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, view } = await accounts.confirmPasswordReset(body.token, body.password);
        setSessionCookie(ctx, token);
        ctx.body = view;
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/auth/invitations/{token}',
      operationId: 'invitation',
      summary: 'What an invitation link offers (workspace, role, e-mail); 404 when unknown, used, revoked or expired.',
      params: TokenParams,
      responses: { 200: { description: 'Invitation', schema: InvitationView } },
      errors: ['bad_request', 'not_found', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await accounts.invitation(params.token);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/auth/invitations/{token}/accept',
      operationId: 'acceptInvitation',
      summary: 'Joins the workspace with the role the invitation names, with a new password; signs the person in.',
      description: '409 `email_taken` when the e-mail has an account already (an account belongs to one workspace).',
      params: TokenParams,
      body: AcceptInvitation,
      responses: { 201: { description: 'Joined and signed in', schema: MeResponse } },
      errors: ['bad_request', 'not_found', 'email_taken', 'service_unavailable'],
      handler: async (ctx, { params, body }) => {
        const { token, view } = await accounts.acceptInvitation(params.token, body);
        setSessionCookie(ctx, token);
        ctx.status = 201;
        ctx.body = view;
      },
    }),
  ];
}
