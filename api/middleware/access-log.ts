import type { Logger } from '../../lib/logger';
import type { Metrics } from '../../lib/metrics';
import type { AppMiddleware } from '../context';

/** One log line and one metrics sample per request, labelled by the route template (never by raw ids). */
export function accessLog(metrics: Metrics, logger: Logger): AppMiddleware {
  return async function accessLogMiddleware(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      if (logger.isLevelEnabled('info')) {
        ctx.state.log.info(
          // A path that carries a credential (an invitation token in a deprecated route) is written as its template.
          {
            method: ctx.method,
            path: route.includes(':token') ? route : ctx.path,
            route,
            status: ctx.status,
            ms: Math.round(seconds * 1000),
          },
          'request',
        );
      }
    }
  };
}
