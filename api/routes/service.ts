import { publicAddress } from '../../lib/config';
import { errors } from '../../lib/errors';
import { constantTimeEqual } from '../../lib/keys';
import { sessionCookie } from '../../lib/sessions';
import { NamespaceMissingError, pingTemporal } from '../../lib/temporal';
import type { AppDeps } from '../deps';
import { renderDocs } from '../docs/render';
import { DOCS_HEADERS } from '../pages';
import { serveDocsAsset } from '../docs/static';
import { buildOpenApi } from '../openapi';
import { type RouteDef, SENT_BY_HANDLER, reply, route } from '../route';
import { z } from 'zod';
import { HealthResponse, NotReadyResponse, ReadyResponse } from '../../lib/schemas/common';

const AssetParams = z.object({ name: z.string().min(1).max(200) });

/**
 * One dependency's readiness: `ok`, `unavailable`, or `namespace_missing` (Temporal answers without our namespace:
 * every workflow call would fail). The reason goes to the log, not to the caller: an unauthenticated probe must not
 * learn host names, addresses or driver messages.
 */
async function check(
  fn: () => Promise<unknown>,
  timeoutMs: number,
  log: (err: unknown) => void,
): Promise<'ok' | 'unavailable' | 'namespace_missing'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch (err) {
    log(err);
    return err instanceof NamespaceMissingError ? 'namespace_missing' : 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

/** Service endpoints (contract, Endpoints → Service). `allRoutes` is read lazily so the document covers every route. */
export function serviceRoutes(deps: AppDeps, allRoutes: () => RouteDef[]): RouteDef[] {
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  let docsHtml: string | undefined;
  const document = () =>
    (openapi ??= buildOpenApi(allRoutes(), {
      serverUrl: deps.config.PUBLIC_BASE_URL,
      sessionCookie: sessionCookie(publicAddress(deps.config)).name,
    }));

  return [
    route({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      tag: 'Service',
      summary: 'Liveness: the process is up. Touches nothing external.',
      responses: { 200: { description: 'Alive', schema: HealthResponse } },
      handler: async () => ({ status: 'ok' }),
    }),
    route({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      tag: 'Service',
      summary:
        'Readiness: 200 when Postgres and Temporal both answer (and the Temporal namespace exists), 503 with the ' +
        'error body when not.',
      responses: {
        200: { description: 'Ready', schema: ReadyResponse },
        503: { description: 'Not ready; `code` is `service_unavailable`', schema: NotReadyResponse },
      },
      handler: async (ctx) => {
        const log = (what: string) => (err: unknown) => ctx.state.log.warn({ err }, `readiness: ${what} unavailable`);
        const [postgres, temporal] = await Promise.all([
          check(() => deps.db.query('SELECT 1'), 2_500, log('postgres')),
          check(() => pingTemporal(deps.temporal), 2_500, log('temporal')),
        ]);
        const checks = { postgres, temporal };
        if (postgres !== 'ok' || temporal !== 'ok') {
          const down = Object.entries(checks)
            .filter(([, v]) => v !== 'ok')
            .map(([k, v]) => (v === 'namespace_missing' ? 'the Temporal namespace is missing' : `${k} unreachable`));
          const { message, code } = errors.serviceUnavailable(`Not ready: ${down.join(' and ')}`);
          return reply(503, { error: message, code, checks });
        }
        return { status: 'ready', checks };
      },
    }),
    route({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      tag: 'Service',
      summary: 'Prometheus metrics of this process; with METRICS_TOKEN set, only for `Authorization: Bearer <token>`.',
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
      errors: ['unauthorized'],
      handler: async (ctx) => {
        const token = deps.config.METRICS_TOKEN;
        if (token && !constantTimeEqual(ctx.get('Authorization'), `Bearer ${token}`)) {
          throw errors.unauthorized('Metrics need Authorization: Bearer <METRICS_TOKEN>');
        }
        ctx.type = deps.metrics.registry.contentType;
        ctx.body = await deps.metrics.registry.metrics();
        return SENT_BY_HANDLER;
      },
    }),
    route({
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'openapi',
      tag: 'Service',
      summary: 'The machine-readable contract (OpenAPI 3.1); version in `info.version`.',
      responses: { 200: { description: 'OpenAPI document', contentType: 'application/json' } },
      handler: async (ctx) => {
        ctx.body = document();
        return SENT_BY_HANDLER;
      },
    }),
    route({
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      tag: 'Service',
      summary:
        'Interactive API reference (Scalar) with a try-it console, fed by `/v1/openapi.json`; without JavaScript, an index of the operations.',
      responses: { 200: { description: 'HTML', contentType: 'text/html' } },
      handler: async (ctx) => {
        // Never framed, nothing sniffed, scripts only from this API: as the dashboard's pages.
        ctx.set(DOCS_HEADERS);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = docsHtml ??= renderDocs(document());
        return SENT_BY_HANDLER;
      },
    }),
    route({
      method: 'get',
      path: '/docs/assets/{name}',
      operationId: 'docsAsset',
      tag: 'Service',
      summary:
        'Stylesheet and scripts of the `/docs` page (ours and the Scalar bundle), served by the API itself; a fixed set of names.',
      params: AssetParams,
      responses: { 200: { description: 'Asset' } },
      errors: ['not_found'],
      handler: async (ctx, { params }) => {
        if (!(await serveDocsAsset(ctx, params.name))) throw errors.notFound('No such asset');
        return SENT_BY_HANDLER;
      },
    }),
  ];
}
