import type Router from '@koa/router';
import { type z } from 'zod';
import { createKeyRateChecker, type PrincipalKind } from '../lib/auth';
import { type Config, publicAddress, rateLimitsOf } from '../lib/config';
import type { Db } from '../lib/db';
import { ApiError, type ErrorCode } from '../lib/errors';
import { LIMITS, type RateGroup } from '../lib/limits';
import { unstorableReason } from '../lib/text';
import type { AppContext, AppMiddleware } from './context';
import { requireKey, requireRole, requireSession } from './middleware/auth';
import { type Role, sessionCookie } from '../lib/sessions';
import { readBody } from './middleware/body';
import { idempotency } from './middleware/idempotency';
import { type MultipartOptions, readMultipart } from './middleware/multipart';
import { rateLimit } from './middleware/rate-limit';
import { sameOriginWrites } from './middleware/same-origin';
import { type NoteOrigin, ownOriginsOf, widgetAccess } from './middleware/widget';

type Schema = z.ZodType | undefined;
/** A schema's parsed (output) type; `undefined` when the route declares none. */
type Parsed<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

/** A route's validated input, typed from its zod schemas: handlers never cast request data. */
export interface RouteInput<B extends Schema, Q extends Schema, P extends Schema> {
  body: Parsed<B>;
  query: Parsed<Q>;
  params: Parsed<P>;
}

/** One declared response of a route: its JSON schema (what the handler returns), or another content type. */
export interface ResponseDef {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  headers?: string[];
}
type Responses = Record<number, ResponseDef>;

/** `T` with its arrays and objects readonly at every depth: a handler may return data it must not change. */
type Readable<T> = T extends readonly (infer U)[]
  ? readonly Readable<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Readable<T[K]> }
    : T;
/** The body a declared response carries: the `z.infer` of its schema; nothing for a response without one (a 204). */
type BodyOf<D> = D extends { schema: infer S extends z.ZodType } ? Readable<z.output<S>> : undefined;
/** The status a handler's plain return value is sent with: the route's first declared success status. */
type SuccessStatus<R> = 200 extends keyof R ? 200 : 201 extends keyof R ? 201 : 202 extends keyof R ? 202 : never;
/** The statuses `mountRoutes` picks from for a plain return value, in the same order as `SuccessStatus`. */
const SUCCESS_ORDER = [200, 201, 202, 204];

const REPLY = Symbol('reply');
/** A reply with a status other than the route's success status (`reply(202, …)`), checked against its schema. */
export interface Reply<S extends number = number, B = unknown> {
  readonly [REPLY]: true;
  status: S;
  body: B;
}
/** Answers with `status` and `body`; the handler's return type checks `body` against that status's schema. */
export function reply<S extends number, B = undefined>(
  status: S,
  ...body: B extends undefined ? [B?] : [B]
): Reply<S, B> {
  return { [REPLY]: true, status, body: body[0] as B };
}

/**
 * The escape hatch, for responses a schema does not describe: an event stream, a redirect, a file's bytes, a 304.
 * The handler has set `ctx.status`/`ctx.body` itself and returns this. Only routes that declare such a response (a
 * `contentType`, or a status without a schema) may return it: a JSON route cannot bypass its schema.
 */
export const SENT_BY_HANDLER: unique symbol = Symbol('response sent by the handler');

type RawAllowed<R> = {
  [K in keyof R]: R[K] extends { contentType: string } ? true : R[K] extends { schema: z.ZodType } ? never : true;
}[keyof R];
/** What a handler may return for responses `R`: the success body, a `reply` of a declared status, or the hatch. */
export type Replied<R> =
  | BodyOf<R[SuccessStatus<R>]>
  | { [K in keyof R & number]: Reply<K, BodyOf<R[K]>> }[keyof R & number]
  | (true extends RawAllowed<R> ? typeof SENT_BY_HANDLER : never);

/**
 * A route is declared once, here-shaped, and that one declaration both mounts the Koa handler (with its auth,
 * body limit and validation) and produces its OpenAPI operation, so the document cannot drift from the code.
 */
export interface RouteDef<
  B extends Schema = any,
  Q extends Schema = any,
  P extends Schema = any,
  R extends Responses = any,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path: `/v1/api/knowledge/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Keys accepted (in `X-Bot-Key` unless `keyHeader` says otherwise); absent = no key auth on this route. */
  keys?: PrincipalKind[];
  /** Where the key is sent: `X-Bot-Key` (default), or `Authorization: Bearer` (the MCP endpoint). */
  keyHeader?: 'x-bot-key' | 'authorization';
  /**
   * The widget surface (`/v1/widget/*`): the public key in the `key` query parameter or `X-Bot-Key`, CORS for the
   * bot's allowed origins, the rate window per (public key + IP) of `rateGroup` (api/middleware/widget.ts).
   */
  widget?: boolean;
  /** Requires a dashboard user session (cookie). */
  session?: boolean;
  /**
   * With `session`: the roles that may call it (docs/decisions/085-roles-and-team.md); absent = owner and admin. Others get 403
   * `forbidden`. Finer rules (an admin may remove only operators) are the service's.
   */
  roles?: readonly Role[];
  /** Writes from pages of other sites are refused, as on the cookie surfaces (a key a page got hold of is no pass). */
  sameOrigin?: boolean;
  /** Not part of the stable public contract (the dashboard surface). */
  unstable?: boolean;
  /**
   * Spec, Versioning rule 5: a route on its way out. The OpenAPI document marks it `deprecated`, and every response
   * carries `Deprecation` (RFC 9745, since when) and `Sunset` (RFC 8594, when it stops), plus a `Link` to read.
   */
  deprecated?: { since: Date; sunset: Date; link?: string };
  body?: B;
  /** Read the body as raw bytes without JSON parsing (signed trigger hooks). */
  rawBody?: boolean;
  /**
   * A `multipart/form-data` body: its text fields are the body `body` validates, its file `ctx.state.upload`
   * (api/middleware/multipart.ts). `bodyLimit` is the whole request's limit.
   */
  multipart?: MultipartOptions;
  bodyLimit?: number;
  query?: Q;
  params?: P;
  /** Header parameters documented for the operation (e.g. `Idempotency-Key`). */
  headers?: { name: string; description: string; required?: boolean }[];
  /** Declared responses by status; a handler's return value is checked against its success status's schema. */
  responses: R;
  /** Error codes this route can answer with, documented under their statuses. */
  errors?: ErrorCode[];
  /** Rate group of the contract's Limits table; absent = not rate limited (admin routes). */
  rateGroup?: RateGroup;
  /** Honours `Idempotency-Key` (contract, Idempotency). */
  idempotent?: boolean;
  /** Extra middleware between idempotency and the handler. */
  use?: AppMiddleware[];
  /**
   * Returns the body of the first declared success status (200, 201 or 202: the `z.infer` of its schema), a
   * `reply(status, body)` of another declared status, or `SENT_BY_HANDLER` where the route declares a response no
   * schema describes.
   */
  handler: (ctx: AppContext, input: RouteInput<B, Q, P>) => Promise<Replied<R>>;
}

/**
 * Declares a route; the handler's `input` is typed from the route's own `body`, `query` and `params` schemas (the
 * validate step has parsed them before the handler runs).
 */
export function route<
  B extends Schema = undefined,
  Q extends Schema = undefined,
  P extends Schema = undefined,
  const R extends Responses = Responses,
>(def: RouteDef<B, Q, P, R>): RouteDef {
  return def;
}

/** Every role: pages and reads every member of a workspace may use. */
/** What every route of the dashboard's own API has in common: a session, and no promise of stability. */
export const DASHBOARD_ROUTE = { tag: 'Dashboard', session: true, unstable: true } as const;

/**
 * What a dashboard route about one agent can answer besides its success: no session, a role without the right,
 * another workspace's agent (or none), bad input, a dependency out of reach.
 */
export const SESSION_ERRORS = ['unauthorized', 'forbidden', 'not_found', 'bad_request', 'service_unavailable'] as const;

export const ALL_ROLES: readonly Role[] = ['owner', 'admin', 'operator'];
/** The default of session routes: the people who manage agents. */
export const MANAGERS: readonly Role[] = ['owner', 'admin'];

/** Errors of the key check every key-authenticated route can answer with (contract, Authentication rules 1–3). */
export const AUTH_ERRORS = [
  'missing_key',
  'invalid_key',
  'wrong_key_type',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

export const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description:
    'Optional. A repeat with the same key within 24 hours replays the stored response (`Idempotency-Replayed: true`).',
};

function zodMessage(error: z.ZodError, where: string): string {
  const describe = (issues: z.core.$ZodIssue[], prefix: PropertyKey[]): string[] =>
    issues.map((i) => {
      // Alternatives (e.g. "user_token, session_id or both"): what each one lacks, joined with "or".
      if (i.code === 'invalid_union' && i.errors.length) {
        return i.errors.map((branch) => describe(branch.slice(0, 1), [...prefix, ...i.path])[0]).join(' or ');
      }
      const full = [...prefix, ...i.path];
      const path = full.length ? full.join('.') : where;
      const message = i.code === 'invalid_type' && /received undefined/.test(i.message) ? 'is required' : i.message;
      return `${path}: ${message}`;
    });
  return describe(error.issues, []).join('; ');
}

/**
 * Every string of a request's validated input must be text Postgres can store (lib/text.ts): a NUL or an unpaired
 * surrogate in any field a route uses — a chat message, a setting, a path or query parameter — is 400 `bad_request`
 * naming the field, before anything is written or any workflow sees it.
 */
function refuseUnstorable(value: unknown, path: string): void {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    if (reason) throw new ApiError('bad_request', `${path}: ${reason}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => refuseUnstorable(v, `${path}.${i}`));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      refuseUnstorable(k, path || 'body');
      refuseUnstorable(v, path === '' ? k : `${path}.${k}`);
    }
  }
}

function validate(def: RouteDef): AppMiddleware {
  return async function validateMiddleware(ctx, next) {
    const parse = (schema: z.ZodType | undefined, value: unknown, where: string) => {
      if (!schema) return undefined;
      const result = schema.safeParse(value);
      if (!result.success) throw new ApiError('bad_request', zodMessage(result.error, where));
      // What the route will use (unknown fields are already dropped) must be storable text.
      refuseUnstorable(result.data, where === 'body' ? '' : where);
      return result.data;
    };
    ctx.state.input = {
      body: parse(def.body, (ctx.request as { body?: unknown }).body ?? {}, 'body'),
      query: parse(def.query, ctx.query, 'query'),
      params: parse(def.params, (ctx as unknown as { params: unknown }).params, 'path'),
    };
    await next();
  };
}

/** Set before anything else runs, so errors carry them too. */
function deprecationHeaders(d: NonNullable<RouteDef['deprecated']>): AppMiddleware {
  const deprecation = `@${Math.floor(d.since.getTime() / 1000)}`;
  const sunset = d.sunset.toUTCString();
  return async function deprecationMiddleware(ctx, next) {
    ctx.set('Deprecation', deprecation);
    ctx.set('Sunset', sunset);
    if (d.link) ctx.set('Link', `<${d.link}>; rel="deprecation"; type="text/html"`);
    await next();
  };
}

function isReply(value: unknown): value is Reply {
  return typeof value === 'object' && value !== null && REPLY in value;
}

function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function mountRoutes(
  router: Router<any, any>,
  defs: RouteDef[],
  deps: {
    db: Db;
    config: Pick<Config, 'PUBLIC_BASE_URL' | 'DASHBOARD_URL' | 'PORT'> & Parameters<typeof rateLimitsOf>[0];
    /** Where the widget runs and where it is refused, for the dashboard (lib/widget/sightings.ts). */
    noteOrigin?: NoteOrigin;
  },
): void {
  const checker = createKeyRateChecker(deps.db);
  const ourOrigins = [deps.config.PUBLIC_BASE_URL, deps.config.DASHBOARD_URL]
    .filter((u): u is string => Boolean(u))
    .map((u) => new URL(u).origin);
  const writesFromOurPages = sameOriginWrites({ allowedOrigins: () => ourOrigins });
  const ownOrigins = ownOriginsOf(deps.config);
  const rateLimits = rateLimitsOf(deps.config);
  for (const def of defs) {
    const chain: AppMiddleware[] = [];
    if (def.deprecated) chain.push(deprecationHeaders(def.deprecated));
    // Cookie surfaces (the dashboard, accounts): writes only from our own pages.
    if (def.session || def.sameOrigin || def.path.startsWith('/v1/auth/')) chain.push(writesFromOurPages);
    // docs/architecture.md, The design this code keeps (a chat turn): auth → rate limit → body limit → zod → idempotency → handler.
    // With a key, the key check and the rate window are one round trip (requireKey counts it).
    if (def.widget) {
      if (!def.rateGroup) throw new Error(`widget route ${def.path} needs a rate group`);
      chain.push(
        widgetAccess(deps.db, {
          rateGroup: def.rateGroup,
          rateLimits,
          checker,
          own: ownOrigins,
          noteOrigin: deps.noteOrigin,
        }),
      );
    } else if (def.keys) {
      chain.push(
        requireKey(deps.db, def.keys, { rateGroup: def.rateGroup, rateLimits, checker, header: def.keyHeader }),
      );
    }
    if (def.session)
      chain.push(
        requireSession(deps.db, sessionCookie(publicAddress(deps.config)).name),
        requireRole(def.roles ?? MANAGERS),
      );
    if (def.rateGroup && !def.keys && !def.widget) chain.push(rateLimit(deps.db, def.rateGroup, rateLimits));
    if (def.method !== 'get' && def.method !== 'delete') {
      chain.push(readBody({ limit: def.bodyLimit ?? LIMITS.bodyBytes, json: !def.rawBody && !def.multipart }));
      if (def.multipart) chain.push(readMultipart(def.multipart));
    }
    chain.push(validate(def));
    if (def.idempotent) chain.push(idempotency(deps.db));
    if (def.use) chain.push(...def.use);
    const success = SUCCESS_ORDER.find((s) => s in def.responses) ?? 200;
    chain.push(async function handler(ctx) {
      const result: unknown = await def.handler(ctx, ctx.state.input as RouteInput<Schema, Schema, Schema>);
      if (result === SENT_BY_HANDLER) return;
      const { status, body } = isReply(result) ? result : { status: success, body: result };
      ctx.status = status;
      if (body !== undefined) ctx.body = body;
    });
    (router as any)[def.method](def.operationId, koaPath(def.path), ...chain);
  }
}
