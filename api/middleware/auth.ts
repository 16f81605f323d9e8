import {
  type KeyRateChecker,
  type Principal,
  type PrincipalKind,
  findPrincipal,
  findPrincipalCounting,
} from '../../lib/auth';
import { LIMITS, type RateGroup, type RateLimits } from '../../lib/limits';
import { enforceRateWindow } from './rate-limit';
import type { Db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import { type Role, findSession } from '../../lib/sessions';
import type { AppContext, AppMiddleware } from '../context';
import { clientBucket } from '../../lib/client-address';

/**
 * Key authentication (contract, Authentication rules 1–3): no key → 401 `missing_key`; unknown or revoked → 401
 * `invalid_key`; a valid key of another type (a `pk_` on `/v1/api/*`) → 403 `wrong_key_type`; storage down, so
 * the key cannot be checked → 503 `service_unavailable`, which the client may retry.
 */
export function requireKey(
  db: Db,
  accept: PrincipalKind[],
  opts: {
    header?: 'x-bot-key' | 'authorization';
    rateGroup?: RateGroup;
    /** The limits in force (RATE_LIMIT_*, lib/config.ts `rateLimitsOf`); the contract's unless given. */
    rateLimits?: RateLimits;
    checker?: KeyRateChecker;
    /** Where the key is read when not from `header` (the widget: a query parameter first); '' = none. */
    keyOf?: (ctx: AppContext) => string;
    /** What is missing, for the 401 `missing_key` text. */
    missing?: string;
    /** Headers even a refusal of an accepted key must carry (the widget: CORS for a page that may read it). */
    expose?: (ctx: AppContext, principal: Principal) => void;
    /** Further checks of an accepted key within its rate window, before the route runs (the widget: the page's origin). */
    admit?: (ctx: AppContext, principal: Principal) => void;
  } = {},
): AppMiddleware {
  const header = opts.header ?? 'x-bot-key';
  const missing = opts.missing ?? `${header === 'authorization' ? 'Authorization: Bearer' : 'X-Bot-Key'} header`;
  return async function requireKeyMiddleware(ctx, next) {
    let key = opts.keyOf ? opts.keyOf(ctx) : ctx.get(header).trim();
    if (header === 'authorization') key = key.replace(/^Bearer\s+/i, '');
    if (!key) throw new ApiError('missing_key', `Missing ${missing}`);
    let principal;
    let window: { count: number; reset: number } | undefined;
    try {
      if (opts.rateGroup) {
        const rate = { ip: clientBucket(ctx.ip), group: opts.rateGroup, accept };
        const found = opts.checker ? await opts.checker(key, rate) : await findPrincipalCounting(db, key, rate);
        principal = found?.principal ?? null;
        window = found?.window;
      } else {
        principal = await findPrincipal(db, key);
      }
    } catch (err) {
      ctx.state.log.warn({ err }, 'key check failed: storage unavailable');
      throw new ApiError('service_unavailable', 'The key could not be checked right now; retry shortly');
    }
    if (!principal) throw new ApiError('invalid_key', 'Unknown or revoked key');
    if (!accept.includes(principal.kind)) {
      throw new ApiError('wrong_key_type', `This endpoint does not accept a ${principal.kind} key`);
    }
    opts.expose?.(ctx, principal);
    ctx.state.principal = principal;
    if (opts.rateGroup && window) {
      enforceRateWindow(ctx, (opts.rateLimits ?? LIMITS.rateGroups)[opts.rateGroup], window.count, window.reset);
    }
    opts.admit?.(ctx, principal);
    await next();
  };
}

/**
 * Dashboard surface (`/v1/dashboard/*`): a user session cookie set by `POST /v1/auth/login`. The dashboard is not
 * a public contract; its errors still have the one shape.
 */
export function requireSession(db: Db, cookieName: string): AppMiddleware {
  return async function requireSessionMiddleware(ctx, next) {
    const token = ctx.cookies.get(cookieName);
    if (!token) throw new ApiError('unauthorized', 'Sign in first (POST /v1/auth/login)');
    let session;
    try {
      session = await findSession(db, token);
    } catch (err) {
      ctx.state.log.warn({ err }, 'session check failed: storage unavailable');
      throw new ApiError('service_unavailable', 'The session could not be checked right now; retry shortly');
    }
    if (!session) throw new ApiError('unauthorized', 'The session expired; sign in again');
    ctx.state.session = session;
    await next();
  };
}

/** The signed-in user's role must be one of `roles` (after `requireSession`); 403 `forbidden` otherwise. */
export function requireRole(roles: readonly Role[]): AppMiddleware {
  return async function requireRoleMiddleware(ctx, next) {
    const role = ctx.state.session?.role;
    if (!role || !roles.includes(role)) {
      throw new ApiError(
        'forbidden',
        `Your role (${role ?? 'none'}) cannot do this; ask the workspace's owner or an admin`,
      );
    }
    await next();
  };
}
