import type { AppDeps } from '../deps';
import { AUTH_ERRORS, ALL_ROLES, type RouteDef, route } from '../route';
import {
  BotParams,
  ScanCancelled,
  ScanList,
  ScanListQuery,
  ScrapeAccepted,
  ScrapeRequest,
} from '../../lib/schemas/scan';
import { keyBot, sessionBot } from '../session';

/** Spec, Admin helpers → POST /v1/admin/scrape, and the dashboard's view of scan progress. */
export function scanRoutes(deps: AppDeps): RouteDef[] {
  const { scans } = deps.services;
  return [
    route({
      method: 'post',
      path: '/v1/admin/scrape',
      operationId: 'scrapeSite',
      tag: 'Admin helpers',
      summary: 'Scans a website into the knowledge base, in the background; optionally re-reads it on a schedule.',
      description:
        'Crawls from `url` over the same site (robots.txt obeyed) and indexes every page with text as a knowledge ' +
        'source (`origin: scan`, `url` set; a re-read replaces a page’s source). The site’s sitemaps (robots.txt ' +
        '`Sitemap:` lines, `/sitemap.xml`) are read first and their pages taken before links; `include` and ' +
        '`exclude` path patterns limit both. One scan per bot at a time: ' +
        '409 `conflict` while one runs. An unreachable site, a site without text or a blocked crawl give no error ' +
        'and add nothing. The result shows in `GET /v1/api/knowledge`. Never rate limited.',
      keys: ['secret'],
      body: ScrapeRequest,
      responses: { 202: { description: 'The scan has started.', schema: ScrapeAccepted } },
      errors: ['bad_request', ...AUTH_ERRORS, 'conflict', 'payload_too_large', 'internal_error'],
      handler: async (ctx, { body }) => {
        return await scans.start(keyBot(ctx), body, ctx.state.log);
      },
    }),
    route({
      method: 'post',
      path: '/v1/dashboard/bots/{id}/scans',
      operationId: 'dashboardScan',
      tag: 'Dashboard',
      unstable: true,
      summary: 'Starts a site scan of the bot (as `POST /v1/admin/scrape`); its progress is in the list below.',
      session: true,
      params: BotParams,
      body: ScrapeRequest,
      responses: { 202: { description: 'The scan has started.', schema: ScrapeAccepted } },
      errors: ['bad_request', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'service_unavailable'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await scans.start({ botId: bot.id, workspaceId: bot.workspace_id }, body, ctx.state.log);
      },
    }),
    route({
      method: 'post',
      path: '/v1/dashboard/bots/{id}/scans/cancel',
      operationId: 'cancelScan',
      tag: 'Dashboard',
      unstable: true,
      summary: 'Stops the bot’s running site scan; it is listed as `cancelled` a moment later.',
      description: 'Pages indexed by earlier scans stay, and so does the address’s refresh schedule.',
      session: true,
      params: BotParams,
      responses: { 202: { description: 'The scan is being stopped.', schema: ScanCancelled } },
      errors: ['unauthorized', 'forbidden', 'not_found', 'conflict', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await scans.cancel(bot.id);
      },
    }),
    route({
      method: 'get',
      path: '/v1/dashboard/bots/{id}/scans',
      operationId: 'listScans',
      tag: 'Dashboard',
      unstable: true,
      summary: 'Recent site scans of a bot with their progress.',
      description: 'Progress comes from the scan record, which the crawl rewrites after every page.',
      session: true,
      roles: ALL_ROLES,
      params: BotParams,
      query: ScanListQuery,
      responses: { 200: { description: 'Scans, newest first', schema: ScanList } },
      errors: ['bad_request', 'unauthorized', 'not_found', 'internal_error'],
      handler: async (ctx, { params, query }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await scans.list(bot.id, query.limit);
      },
    }),
  ];
}
