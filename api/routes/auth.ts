import { SESSION_COOKIE, SESSION_DAYS } from '../../lib/sessions';
import type { AppDeps } from '../deps';
import { type RouteDef, route } from '../route';
import { LoginRequest, LoginResponse, MeResponse } from '../../lib/schemas/auth';
import { sessionUser } from '../session';

/** Spec: login is `POST /v1/auth/login`; the session is a cookie (`ap_session`, HttpOnly, SameSite=Lax). */
export function authRoutes(deps: AppDeps): RouteDef[] {
  const { accounts } = deps.services;
  return [
    route({
      method: 'post',
      path: '/v1/auth/login',
      operationId: 'login',
      tag: 'Account',
      summary: 'Signs a dashboard user in; sets the session cookie.',
      unstable: true,
      body: LoginRequest,
      responses: { 200: { description: 'Signed in', schema: LoginResponse } },
      errors: ['bad_request', 'invalid_credentials', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const { token, user } = await accounts.login(body.email, body.password, ctx.ip);
        // Secure exactly when the request arrived over https, as seen through trusted proxies (X-Forwarded-Proto with
        // TRUST_PROXY): a Secure cookie on a request seen as plain HTTP is refused by the cookie library (a 500).
        ctx.cookies.set(SESSION_COOKIE, token, {
          httpOnly: true,
          sameSite: 'lax',
          secure: ctx.secure,
          maxAge: SESSION_DAYS * 86_400_000,
          path: '/',
        });
        ctx.body = user;
      },
    }),
    route({
      method: 'get',
      path: '/v1/auth/me',
      operationId: 'me',
      tag: 'Account',
      summary: 'The signed-in user (id, e-mail, role) and their workspace; 401 `unauthorized` without a session.',
      unstable: true,
      session: true,
      responses: { 200: { description: 'Signed-in user', schema: MeResponse } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await accounts.me(sessionUser(ctx));
      },
    }),
    route({
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'logout',
      tag: 'Account',
      summary: 'Ends the session.',
      unstable: true,
      responses: { 200: { description: 'Signed out' } },
      handler: async (ctx) => {
        const token = ctx.cookies.get(SESSION_COOKIE);
        if (token) await accounts.logout(token);
        ctx.cookies.set(SESSION_COOKIE, '', { maxAge: 0, path: '/' });
        ctx.body = { status: 'signed_out' };
      },
    }),
  ];
}
