import { createHmac } from 'node:crypto';
import { constantTimeEqual } from './keys';
import { LIMITS } from './limits';

export interface ConfirmedVisitor {
  user: string;
  role: 'admin' | 'visitor';
}

/**
 * Visitor identity confirmation `v1.<data>.<signature>` (contract, Authentication → Visitor identity confirmation).
 * Returns the confirmed visitor, or null for anything missing, malformed, expired, too far ahead, foreign or
 * badly signed: rule 3 says no error is ever returned, the visitor simply stays ordinary.
 */
export function verifyVisitorConfirmation(
  token: string | undefined,
  opts: { botId: string; secret: string; nowSeconds?: number },
): ConfirmedVisitor | null {
  if (!token) return null;
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1' || !parts[1] || !/^[0-9a-f]{64}$/i.test(parts[2])) return null;
  const [, data, signature] = parts;
  const expected = createHmac('sha256', opts.secret).update(`v1.${data}`).digest('hex');
  if (!constantTimeEqual(expected, signature.toLowerCase())) return null;
  let claims: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(data)) return null; // base64url without padding
    claims = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!claims || typeof claims !== 'object') return null;
  const { user, role, bot, exp } = claims as Record<string, unknown>;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  // Rule 1: exp is required, not past, and at most 24 hours ahead.
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= now || exp > now + LIMITS.identityMaxAheadSeconds)
    return null;
  // Rule 2: issued for this bot only.
  if (bot !== opts.botId) return null;
  if (typeof user !== 'string' || user.length === 0 || user.length > 256) return null;
  return { user, role: role === 'admin' ? 'admin' : 'visitor' };
}

/** What an integrator's server does; used by tests and documented in docs/widget.md as the reference. */
export function signVisitorConfirmation(claims: Record<string, unknown>, secret: string): string {
  const data = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `v1.${data}.${createHmac('sha256', secret).update(`v1.${data}`).digest('hex')}`;
}
