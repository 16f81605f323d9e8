import { z } from 'zod';
import { errors } from '../../lib/errors';
import { ASSET_PREFIX, DASHBOARD_PAGES, type DashboardPages, createDashboardPages } from '../pages';
import { type RouteDef, route } from '../route';

const AssetParams = z.object({ name: z.string().min(1).max(200) });

const pageResponses = {
  200: { description: 'The dashboard app (HTML)', contentType: 'text/html' },
  503: { description: 'The pages are not built: run `bash scripts/setup.sh`', contentType: 'text/plain' },
};

/** The dashboard's pages (web/dashboard, built by scripts/setup.sh), served by the API itself. */
export function pageRoutes(pages: DashboardPages = createDashboardPages()): RouteDef[] {
  return [
    ...DASHBOARD_PAGES.map((page) =>
      route({
        method: 'get',
        path: page,
        operationId: `page${page.replace(/\W+(\w)/g, (_, c: string) => c.toUpperCase())}`,
        tag: 'Pages',
        unstable: true,
        summary:
          page === '/connect'
            ? 'The page where the workspace owner approves a builder client (`verify_url` of `/v1/mcp-pair/start`).'
            : 'A dashboard page.',
        responses: pageResponses,
        handler: (ctx) => pages.page(ctx),
      }),
    ),
    route({
      method: 'get',
      path: `${ASSET_PREFIX}{name}`,
      operationId: 'dashboardAsset',
      tag: 'Pages',
      unstable: true,
      summary:
        "Scripts and styles of the dashboard's pages; names carry a content hash, so they are cached for a year.",
      params: AssetParams,
      responses: { 200: { description: 'Asset' } },
      errors: ['not_found'],
      handler: async (ctx, { params }) => {
        if (!(await pages.asset(ctx, params.name))) throw errors.notFound('No such asset');
      },
    }),
  ];
}
