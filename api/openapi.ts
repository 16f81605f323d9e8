import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../lib/errors';
import { IDEMPOTENCY_HEADER, type ResponseDef, type RouteDef } from './route';
import { ErrorBody } from '../lib/schemas/common';
import { SESSION_COOKIE } from '../lib/sessions';

const API_VERSION = '1.3.0';

type JsonSchema = Record<string, unknown>;

/** Converts a zod schema to JSON Schema 2020-12 (the dialect of OpenAPI 3.1), hoisting named schemas. */
function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  delete json.$schema;
  const rewrite = (s: JsonSchema): JsonSchema =>
    JSON.parse(JSON.stringify(s).replace(/"#\/\$defs\//g, '"#/components/schemas/'), (key, value) =>
      // Responses may gain fields within /v1 (contract, Versioning 2–3): never promise there are no others.
      io === 'output' && key === 'additionalProperties' && value === false ? undefined : value,
    );
  for (const [name, def] of Object.entries(defs)) components[name] = rewrite(def);
  const id = z.globalRegistry.get(schema)?.id;
  if (id && !(id in defs)) {
    components[id] = rewrite(json);
    return { $ref: `#/components/schemas/${id}` };
  }
  return rewrite(json);
}

function parametersOf(
  schema: z.ZodType | undefined,
  where: 'query' | 'path',
  components: Record<string, JsonSchema>,
  path?: string,
) {
  if (!schema) return [];
  const json = toSchema(schema, 'input', components) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  // A path parameter exists only where the path names it: a schema shared by several paths may declare more.
  const named = (name: string) => where !== 'path' || !path || path.includes(`{${name}}`);
  return Object.entries(json.properties ?? {})
    .filter(([name]) => named(name))
    .map(([name, s]) => ({
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      description: typeof s.description === 'string' ? s.description : undefined,
      schema: s,
    }));
}

/**
 * A multipart operation's form: the route's text fields (its body schema, by reference when it is a named component)
 * and the file, as binary.
 */
function multipartSchema(def: RouteDef, components: Record<string, JsonSchema>): JsonSchema {
  const file = def.multipart!.file;
  const filePart: JsonSchema = {
    type: 'object',
    properties: {
      [file]: {
        type: 'string',
        format: 'binary',
        description: `The file (at most ${def.multipart!.maxFileBytes / 1024 / 1024} MiB).`,
      },
    },
    required: [file],
  };
  return def.body ? { allOf: [toSchema(def.body, 'input', components), filePart] } : filePart;
}

const KEY_SCHEMES: Record<string, string> = { secret: 'secretKey', public: 'publicKey', builder: 'builderKey' };

/**
 * The errors every route of its kind can answer with, whatever it lists itself, so the document declares every
 * status the server returns: input it validates (400), the key check (401/403, 503 when storage is down), the
 * session check, a body limit (413), a rate group (429), and the two any request may meet (500, 503).
 */
function implicitErrors(def: RouteDef): ErrorCode[] {
  return [
    ...(def.body || def.query || def.params || def.idempotent ? (['bad_request'] as const) : []),
    ...(def.keys ? (['missing_key', 'invalid_key', 'wrong_key_type'] as const) : []),
    ...(def.session ? (['unauthorized'] as const) : []),
    ...(def.method !== 'get' && def.method !== 'delete' ? (['payload_too_large'] as const) : []),
    ...(def.rateGroup ? (['rate_limited'] as const) : []),
    ...(def.idempotent ? (['idempotency_key_reused', 'idempotency_in_progress'] as const) : []),
    'internal_error',
    'service_unavailable',
  ];
}

/**
 * `sessionCookie`: the session cookie's name in this deployment (`sessionCookie` in lib/sessions.ts), so that the
 * served document names the cookie its API sets; `ap_session` when not given.
 */
export function buildOpenApi(defs: RouteDef[], opts: { serverUrl?: string; sessionCookie?: string } = {}) {
  const components: Record<string, JsonSchema> = {};
  const errorRef = toSchema(ErrorBody, 'output', components);
  const paths: Record<string, Record<string, unknown>> = {};

  for (const def of defs) {
    const responses: Record<string, unknown> = {};
    // Headers every response of the operation carries (contract: X-Request-Id always; RateLimit-* on /v1/api/*).
    const always = [
      'X-Request-Id',
      ...(def.path.startsWith('/v1/api/') ? ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] : []),
      ...(def.deprecated ? ['Deprecation', 'Sunset'] : []),
    ];
    const headersOf = (extra: string[] = []) => ({
      ...Object.fromEntries(always.map((h) => [h, { required: true, schema: { type: 'string' } }])),
      ...Object.fromEntries(extra.map((h) => [h, { schema: { type: 'string' } }])),
    });
    for (const [status, r] of Object.entries(def.responses as Record<number, ResponseDef>)) {
      responses[status] = {
        description: r.description,
        headers: headersOf([...(r.headers ?? []), ...(def.idempotent ? ['Idempotency-Replayed'] : [])]),
        ...(r.schema || r.contentType
          ? {
              content: {
                [r.contentType ?? 'application/json']: {
                  schema: r.schema ? toSchema(r.schema, 'output', components) : {},
                },
              },
            }
          : {}),
      };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of new Set([...(def.errors ?? []), ...implicitErrors(def)])) {
      const status = ERROR_CODES[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of byStatus) {
      if (responses[String(status)]) continue;
      responses[String(status)] = {
        description: `Error; \`code\` is one of: ${codes.map((c) => `\`${c}\``).join(', ')}`,
        headers: headersOf(status === 429 || status === 503 ? ['Retry-After'] : []),
        content: { 'application/json': { schema: errorRef } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: def.operationId,
      summary: def.summary,
      ...(def.deprecated ? { deprecated: true } : {}),
      ...(def.description ? { description: def.description } : {}),
      tags: [def.tag],
      parameters: [
        ...parametersOf(def.params, 'path', components, def.path),
        ...parametersOf(def.query, 'query', components),
        ...[...(def.headers ?? []), ...(def.idempotent ? [IDEMPOTENCY_HEADER] : [])].map(
          (h: { name: string; description: string; required?: boolean }) => ({
            name: h.name,
            in: 'header',
            required: h.required ?? false,
            description: h.description,
            schema: { type: 'string' },
          }),
        ),
      ],
      ...(def.multipart
        ? {
            requestBody: {
              required: true,
              content: {
                'multipart/form-data': {
                  schema: multipartSchema(def, components),
                  encoding: { [def.multipart.file]: { contentType: 'application/octet-stream' } },
                },
              },
            },
          }
        : def.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: toSchema(def.body, 'input', components) } },
              },
            }
          : def.rawBody
            ? { requestBody: { required: false, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } }
            : {}),
      responses,
      ...(def.keys
        ? {
            security: def.keys.map((k) => ({
              [k === 'builder' && def.keyHeader !== 'authorization' ? 'builderKeyHeader' : (KEY_SCHEMES[k] ?? k)]: [],
            })),
          }
        : def.session
          ? { security: [{ session: [] }] }
          : // Said outright, so tools do not apply a document-wide default: this operation needs no credential.
            { security: [] }),
      ...(def.unstable
        ? {
            'x-stability': 'unstable',
            description:
              `${def.description ?? ''}\n\nNot part of the stable public contract: may change with the dashboard.`.trim(),
          }
        : {}),
    };
    (paths[def.path] ??= {})[def.method] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Platform API',
      version: API_VERSION,
      description:
        'Agents with a knowledge base, chat (JSON and streaming), operator handoff with signed webhooks, and triggers. ' +
        'Errors are `{error, code}`; every response carries `X-Request-Id`.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Where the API is reached; without a public address, the document's own origin (a relative URL).
    servers: [{ url: opts.serverUrl ?? '/' }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        secretKey: { type: 'apiKey', in: 'header', name: 'X-Bot-Key', description: 'Secret bot key `sk_…`' },
        publicKey: { type: 'apiKey', in: 'header', name: 'X-Bot-Key', description: 'Public bot key `pk_…` (widget)' },
        builderKey: { type: 'http', scheme: 'bearer', description: 'Builder key `ck_…` (MCP)' },
        builderKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Bot-Key',
          description: 'Builder key `ck_…` (the HTTP builder call)',
        },
        // A security scheme names one cookie: the one this deployment sets; the description tells both.
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: opts.sessionCookie ?? SESSION_COOKIE,
          description:
            "Dashboard session from `POST /v1/auth/login` (HttpOnly). Its name depends on the API's public address " +
            '(`PUBLIC_BASE_URL`): `__Host-ap_session` when it is https (always Secure, path `/`, this host only), ' +
            '`ap_session` otherwise (a local set-up on http). The API reads only the one it sets; `name` here is ' +
            "this deployment's.",
        },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;
