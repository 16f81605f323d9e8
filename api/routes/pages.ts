import { z } from 'zod';
import { errors } from '../../lib/errors';
import { ASSET_PREFIX, DASHBOARD_PAGES, type DashboardPages, createDashboardPages } from '../pages';
import { type RouteDef, SENT_BY_HANDLER, route } from '../route';

const AssetParams = z.object({ name: z.string().min(1).max(200) });
/** Path segments of page addresses: ids and tab names, never anything the app would not draw. */
const Segment = z.string().regex(/^[\w-]{1,64}$/, 'not a page');
const PageParams = z.object({ id: Segment.optional(), tab: Segment.optional() });

const PAGE_SUMMARIES: Record<string, string> = {
  '/connect': 'The page where the workspace owner approves a builder client (`verify_url` of `/v1/mcp-pair/start`).',
  '/': 'The dashboard: agents, the operator inbox, notifications, billing and the team.',
};

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
        operationId:
          page === '/'
            ? 'pageHome'
            : `page${page.replace(/\W+(\w)/g, (_, c: string) => c.toUpperCase()).replace(/\W+$/, '')}`,
        tag: 'Pages',
        unstable: true,
        summary: PAGE_SUMMARIES[page] ?? 'A dashboard page.',
        ...(page.includes('{') ? { params: PageParams } : {}),
        responses: pageResponses,
        handler: async (ctx) => {
          await pages.page(ctx);
          return SENT_BY_HANDLER;
        },
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
        return SENT_BY_HANDLER;
      },
    }),
  ];
}
