import Router from '@koa/router';
import Koa from 'koa';
import type { AppState } from './context';
import type { AppDeps } from './deps';
import { rateLimitsOf } from '../lib/config';
import { accessLog } from './middleware/access-log';
import { errorHandler } from './middleware/errors';
import { defaultRateHeaders } from './middleware/rate-limit';
import { requestId } from './middleware/request-id';
import { mountRoutes, type RouteDef } from './route';
import { actionRoutes } from './routes/actions';
import { apiRoutes } from './routes/api';
import { authRoutes } from './routes/auth';
import { builderRoutes } from './routes/builder';
import { checkRoutes } from './routes/checks';
import { dashboardRoutes } from './routes/dashboard';
import { deliveryRoutes } from './routes/deliveries';
import { createDashboardPages, pageNotFound } from './pages';
import { pageRoutes } from './routes/pages';
import { pairingRoutes } from './routes/pairing';
import { triggerRoutes } from './routes/triggers';
import { serviceRoutes } from './routes/service';
import { mediaRoutes } from './routes/media';
import { billingRoutes } from './routes/billing';
import { inboxRoutes } from './routes/inbox';
import { reportRoutes } from './routes/reports';
import { teamRoutes } from './routes/team';
import { widgetRoutes } from './routes/widget';
import { ownOriginsOf, widgetPreflight } from './middleware/widget';

/** Builds the Koa app; never listens (api/server.ts does), so tests can drive `app.callback()` too. */
export function createApp(deps: AppDeps): Koa<AppState> {
  // Behind a load balancer, TRUST_PROXY=true makes ctx.ip the client's address (X-Forwarded-For) for rate limits.
  // TRUST_PROXY_HOPS: only the entries our own proxies appended to X-Forwarded-For count (Koa's maxIpsCount).
  const app = new Koa<AppState>({ proxy: deps.config.TRUST_PROXY, maxIpsCount: deps.config.TRUST_PROXY_HOPS });
  const routes: RouteDef[] = [];
  const pages = createDashboardPages();
  routes.push(
    ...serviceRoutes(deps, () => routes),
    ...apiRoutes(deps),
    ...mediaRoutes(deps),
    ...widgetRoutes(deps),
    ...triggerRoutes(deps),
    ...actionRoutes(deps),
    ...authRoutes(deps),
    ...teamRoutes(deps),
    ...billingRoutes(deps),
    ...dashboardRoutes(deps),
    ...deliveryRoutes(deps),
    ...inboxRoutes(deps),
    ...reportRoutes(deps),
    ...checkRoutes(deps),
    ...builderRoutes(deps),
    ...pairingRoutes(deps, deps.services.pairing),
    ...pageRoutes(pages),
  );

  const router = new Router<AppState>();
  const noteOrigin = deps.services.widget.sightings.note;
  mountRoutes(router, routes, { ...deps, noteOrigin });

  // Koa's default `error` event prints the stack to stderr; errors are already logged with the request id.
  app.silent = true;
  app.use(requestId(deps.logger));
  app.use(accessLog(deps.metrics, deps.logger));
  app.use(errorHandler());
  app.use(defaultRateHeaders(rateLimitsOf(deps.config)));
  // CORS preflights of the widget, answered for the bot's allowed origins before routing (the router has no OPTIONS).
  app.use(widgetPreflight(deps.db, ownOriginsOf(deps.config), rateLimitsOf(deps.config), noteOrigin));
  // A browser on a path that is no page gets the app's "Page not found"; programs get the JSON 404.
  app.use(pageNotFound(pages));
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: false,
    }),
  );
  return app;
}
