import { z } from 'zod';
import { ApiError } from '../../lib/errors';
import { verifyPassword } from '../../lib/passwords';
import { SESSION_COOKIE, SESSION_DAYS, createSession, endSession } from '../../lib/sessions';
import type { AppDeps } from '../app';
import type { RouteDef } from '../route';

const LoginRequest = z.object({ email: z.string().min(3).max(320), password: z.string().min(1).max(1000) }).meta({ id: 'LoginRequest' });
const LoginResponse = z.object({ user_id: z.string(), workspace_id: z.string(), email: z.string() }).meta({ id: 'LoginResponse' });

/** Spec: login is `POST /v1/auth/login`; the session is a cookie (`ap_session`, HttpOnly, SameSite=Lax). */
export function authRoutes(deps: AppDeps): RouteDef[] {
  const secure = deps.config.PUBLIC_BASE_URL?.startsWith('https://') ?? false;
  return [
    {
      method: 'post',
      path: '/v1/auth/login',
      operationId: 'login',
      tag: 'Account',
      summary: 'Signs a dashboard user in; sets the session cookie.',
      unstable: true,
      body: LoginRequest,
      responses: { 200: { description: 'Signed in', schema: LoginResponse } },
      errors: ['bad_request', 'invalid_credentials', 'service_unavailable'],
      handler: async (ctx) => {
        const { email, password } = ctx.state.input.body as z.infer<typeof LoginRequest>;
        const res = await deps.db.query<{ id: string; workspace_id: string; email: string; password_hash: string }>(
          `SELECT id, workspace_id, email, password_hash FROM users WHERE lower(email) = lower($1)`,
          [email],
        );
        const user = res.rows[0];
        // Same answer and similar time for an unknown e-mail and a wrong password.
        const ok = await verifyPassword(password, user?.password_hash ?? 'scrypt$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
        if (!user || !ok) throw new ApiError('invalid_credentials', 'Wrong e-mail or password');
        const token = await createSession(deps.db, user.id, user.workspace_id);
        ctx.cookies.set(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_DAYS * 86_400_000, path: '/' });
        ctx.body = { user_id: user.id, workspace_id: user.workspace_id, email: user.email };
      },
    },
    {
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'logout',
      tag: 'Account',
      summary: 'Ends the session.',
      unstable: true,
      responses: { 200: { description: 'Signed out' } },
      handler: async (ctx) => {
        const token = ctx.cookies.get(SESSION_COOKIE);
        if (token) await endSession(deps.db, token);
        ctx.cookies.set(SESSION_COOKIE, '', { maxAge: 0, path: '/' });
        ctx.body = { status: 'signed_out' };
      },
    },
  ];
}
