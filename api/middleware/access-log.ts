import type { Logger } from '../../lib/logger';
import type { Metrics } from '../../lib/metrics';
import type { AppContext, AppMiddleware, StreamTap } from '../context';

const routeOf = (ctx: AppContext) => (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';

/** Which frame a chunk of an event stream is (`data: <json>`): a fragment, an error frame, or the end frame. */
function frameKind(chunk: Buffer): 'delta' | 'error' | 'end' {
  try {
    const frame = JSON.parse(chunk.toString('utf8', 'data: '.length)) as Record<string, unknown>;
    return 'delta' in frame ? 'delta' : 'error' in frame ? 'error' : 'end';
  } catch {
    return 'end';
  }
}

/**
 * One log line and one metrics sample per request, labelled by the route template (never by raw ids); an event
 * stream's first frame and its end are timed too, through a tap on its frames (api/event-stream.ts).
 */
export function accessLog(metrics: Metrics, logger: Logger): AppMiddleware {
  return async function accessLogMiddleware(ctx, next) {
    const started = process.hrtime.bigint();
    const since = () => Number(process.hrtime.bigint() - started) / 1e9;
    let framed = false;
    const tap: StreamTap = {
      data(chunk) {
        if (framed) return;
        framed = true;
        metrics.streamFirstFrame.observe({ route: routeOf(ctx), frame: frameKind(chunk) }, since());
      },
      end() {
        metrics.streamDuration.observe({ route: routeOf(ctx) }, since());
      },
    };
    ctx.state.streamTaps = [...(ctx.state.streamTaps ?? []), tap];
    try {
      await next();
    } finally {
      const seconds = since();
      const route = routeOf(ctx);
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
