import { type KeyRateChecker, type Principal, createKeyRateChecker } from '../../lib/auth';
import { clientBucket } from '../../lib/client-address';
import type { Db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import { LIMITS, type RateGroup, type RateLimits } from '../../lib/limits';
import type { AppContext, AppMiddleware } from '../context';
import { requireKey } from './auth';
import { enforceRateWindow } from './rate-limit';

/**
 * The widget surface (`/v1/widget/*`, docs/widget.md) is called from visitors' browsers on the integrator's sites
 * with the bot's public key. Browsers may use it only from the bot's allowed origins (CORS): the key travels in the
 * `key` query parameter — a preflight carries no header values, so only the address can say which bot it is for —
 * or in `X-Bot-Key` for callers that are not browsers.
 */
const WIDGET_PREFIX = '/v1/widget/';

const ALLOWED_HEADERS = 'Content-Type, X-Bot-Key, X-Visitor-Token, X-Request-Id';
const EXPOSED_HEADERS = 'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';
/** Browsers cache a preflight this long (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

function presentedKey(ctx: AppContext): string {
  const fromQuery = typeof ctx.query.key === 'string' ? ctx.query.key : '';
  return (fromQuery || ctx.get('X-Bot-Key')).trim();
}

/** The platform's own origins (its pages may use any bot's widget, e.g. to preview it). */
export type OwnOrigins = (ctx: AppContext) => string[];

/** PUBLIC_BASE_URL's and DASHBOARD_URL's origins, and the address the request reached us at. */
export function ownOriginsOf(config: { PUBLIC_BASE_URL?: string; DASHBOARD_URL?: string }): OwnOrigins {
  const configured = [config.PUBLIC_BASE_URL, config.DASHBOARD_URL]
    .filter((u): u is string => Boolean(u))
    .map((u) => new URL(u).origin);
  return (ctx) => [...configured, `${ctx.protocol}://${ctx.host}`];
}

/** Notes a page origin the widget served or refused (lib/widget/sightings.ts), for the dashboard's "installed on". */
export type NoteOrigin = (botId: string, origin: string, allowed: boolean) => void;

/** CORS preflights count in the widget's reads, per public key and client address, as the calls they precede. */
const PREFLIGHT_GROUP: RateGroup = 'widgetReads';

/** An `Origin` longer than any origin a bot may allow is no browser's: 400, before anything is looked up or noted. */
function boundOrigin(origin: string): void {
  if (origin.length > LIMITS.widget.originChars) {
    throw new ApiError('bad_request', `Origin must be at most ${LIMITS.widget.originChars} characters`);
  }
}

/** Whether a page of `origin` may use the bot's widget: one of our own pages (a preview of any bot) or an allowed site. */
function pageMayUse(
  ctx: AppContext,
  origin: string,
  principal: Principal,
  own: OwnOrigins,
): 'own' | 'allowed' | 'refused' {
  if (own(ctx).includes(origin)) return 'own';
  return (principal.allowedOrigins ?? []).includes(origin) ? 'allowed' : 'refused';
}

/**
 * Decides an integrator's page (not one of ours): noted, so the owner can see where the widget runs and where it was
 * refused. Called only once the request is within its rate window: what is past the budget notes nothing.
 */
function decidePage(
  ctx: AppContext,
  origin: string,
  principal: Principal,
  own: OwnOrigins,
  note?: NoteOrigin,
): boolean {
  const verdict = pageMayUse(ctx, origin, principal, own);
  if (verdict !== 'own' && principal.botId) note?.(principal.botId, origin, verdict === 'allowed');
  return verdict !== 'refused';
}

function setCors(ctx: AppContext, origin: string): void {
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  ctx.vary('Origin');
}

/**
 * Answers CORS preflights of `/v1/widget/*`: 204 with the allowance for the bot's allowed origins, and 204 without
 * any `Access-Control-Allow-*` header for every other origin or key (the browser then refuses the call; nothing
 * about the bot is told). A preflight with the bot's public key counts in the widget's reads (per key and client
 * address, like the call it precedes): past the budget it is 429 with `Retry-After`, and the browser reports the call
 * as failed, which the widget retries as it does when offline. An `Origin` longer than an allowed origin may be is 400.
 */
export function widgetPreflight(
  db: Db,
  own: OwnOrigins,
  limits: RateLimits,
  note?: NoteOrigin,
  checker: KeyRateChecker = createKeyRateChecker(db),
): AppMiddleware {
  return async function widgetPreflightMiddleware(ctx, next) {
    if (ctx.method !== 'OPTIONS' || !ctx.path.startsWith(WIDGET_PREFIX) || !ctx.get('Access-Control-Request-Method')) {
      return next();
    }
    const origin = ctx.get('Origin');
    const key = presentedKey(ctx);
    ctx.status = 204;
    ctx.vary('Origin');
    if (!origin || !key.startsWith('pk_')) return;
    boundOrigin(origin);
    let found;
    try {
      found = await checker(key, { ip: clientBucket(ctx.ip), group: PREFLIGHT_GROUP, accept: ['public'] });
    } catch (err) {
      ctx.state.log.warn({ err }, 'key check failed: storage unavailable');
      throw new ApiError('service_unavailable', 'The key could not be checked right now; retry shortly');
    }
    if (!found) return;
    if (found.window) enforceRateWindow(ctx, limits[PREFLIGHT_GROUP], found.window.count, found.window.reset);
    if (!decidePage(ctx, origin, found.principal, own, note)) return;
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Methods', 'GET, POST');
    ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
  };
}

/**
 * The widget's key check and rate window (per public key + IP, in the same round trip): `requireKey` with the key
 * from the address, and the page's origin admitted once the request is within its window (then, and only then, is
 * the origin noted). A request from a page whose origin the bot does not allow is refused with 403
 * `origin_not_allowed` before anything runs (a browser would not let the page read the answer, but
 * the request would still have been made). No `Origin` means no browser page: the public key is public, so such
 * callers get what any page of an allowed site would. A secret key here is 403 `wrong_key_type` (contract,
 * Authentication rule 4: it must never reach a browser).
 */
export function widgetAccess(
  db: Db,
  opts: {
    rateGroup: RateGroup;
    rateLimits: RateLimits;
    checker?: KeyRateChecker;
    own: OwnOrigins;
    noteOrigin?: NoteOrigin;
  },
): AppMiddleware {
  return requireKey(db, ['public'], {
    rateGroup: opts.rateGroup,
    rateLimits: opts.rateLimits,
    checker: opts.checker,
    keyOf: presentedKey,
    missing: 'the public key: `key` query parameter or X-Bot-Key header',
    expose(ctx, principal) {
      const origin = ctx.get('Origin');
      if (!origin) return;
      boundOrigin(origin);
      // From here on, errors too are readable by the page (the widget shows them, a 429 included).
      if (pageMayUse(ctx, origin, principal, opts.own) !== 'refused') setCors(ctx, origin);
    },
    admit(ctx, principal) {
      const origin = ctx.get('Origin');
      if (!origin) return;
      if (!decidePage(ctx, origin, principal, opts.own, opts.noteOrigin)) {
        throw new ApiError(
          'origin_not_allowed',
          `Pages of ${origin} may not use this widget: add the origin to the bot's allowed widget origins`,
        );
      }
    },
  });
}
