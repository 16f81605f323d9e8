import type { Db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import type { RateGroup, RateLimits } from '../../lib/limits';
import type { AppContext, AppMiddleware } from '../context';
import { clientBucket } from '../../lib/client-address';
import { LIMITS } from '../../lib/limits';

const RATE_WINDOW_SECONDS = LIMITS.rateWindowSeconds;

function setHeaders(ctx: AppContext, limit: number, remaining: number, resetSeconds: number) {
  ctx.set('RateLimit-Limit', String(limit));
  ctx.set('RateLimit-Remaining', String(Math.max(0, remaining)));
  ctx.set('RateLimit-Reset', String(Math.max(0, resetSeconds)));
}

function secondsToWindowEnd(now = Date.now()): number {
  const windowMs = RATE_WINDOW_SECONDS * 1000;
  return Math.ceil((windowMs - (now % windowMs)) / 1000);
}

/**
 * The contract puts `RateLimit-*` on every `/v1/api/*` response. Requests that never reach a counted route (no key,
 * unknown route) are not charged to any budget; they carry the full budget of the reads group.
 */
export function defaultRateHeaders(limits: RateLimits): AppMiddleware {
  return async function defaultRateHeadersMiddleware(ctx, next) {
    if (ctx.path.startsWith('/v1/api/')) {
      const limit = limits.reads;
      setHeaders(ctx, limit, limit, secondsToWindowEnd());
    }
    await next();
  };
}

/**
 * Fixed one-minute windows counted per (key + IP + group) in Postgres, so every API replica shares the count
 * (contract, Limits). One upsert per request; the window row is the counter.
 */
export function rateLimit(db: Db, group: RateGroup, limits: RateLimits): AppMiddleware {
  return async function rateLimitMiddleware(ctx, next) {
    const principal = ctx.state.principal!;
    const bucket = `${principal.keyId}|${clientBucket(ctx.ip)}|${group}`;
    const res = await db.query<{ count: number; reset: number }>(
      `INSERT INTO rate_windows (bucket, window_start, count)
       VALUES ($1, date_trunc('minute', now()), 1)
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
       RETURNING count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS reset`,
      [bucket],
    );
    enforceRateWindow(ctx, limits[group], res.rows[0].count, res.rows[0].reset);
    await next();
  };
}

/** Sets the `RateLimit-*` headers of a counted request, and refuses it with 429 past its group's `limit`. */
export function enforceRateWindow(ctx: AppContext, limit: number, count: number, reset: number): void {
  setHeaders(ctx, limit, limit - count, reset);
  if (count > limit) {
    throw new ApiError(
      'rate_limited',
      `Rate limit of ${limit} requests per minute exceeded; retry after ${reset} s`,
      {},
      {
        'Retry-After': String(reset),
        'RateLimit-Limit': String(limit),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(reset),
      },
    );
  }
}
