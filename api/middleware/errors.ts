import { ApiError, errors, isUnavailableError } from '../../lib/errors';
import type { AppMiddleware } from '../context';

/**
 * The one error handler at the top of the chain: every failure leaves as `{error, code}`. Unexpected exceptions
 * are logged with the request id and answered 500 `internal_error` with nothing of their internals; a dependency
 * that cannot be reached (Postgres down) is 503 `service_unavailable`, which clients may retry.
 */
export function errorHandler(): AppMiddleware {
  return async function errorMiddleware(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw errors.notFound(`No route for ${ctx.method} ${ctx.path}`);
      }
      // A method the router implements nowhere (TRACE, PROPFIND) is as not-allowed as any other: 405, never 501.
      if ((ctx.status === 405 || ctx.status === 501) && !ctx.body) {
        throw new ApiError(
          'method_not_allowed',
          `${ctx.method} is not allowed on ${ctx.path}`,
          {},
          { Allow: ctx.response.get('Allow') },
        );
      }
    } catch (err) {
      let apiError: ApiError;
      if (err instanceof ApiError) {
        apiError = err;
        // A dependency's unavailability answered in the route's own terms (a chat turn that may go on) is logged as
        // any other.
        if (isUnavailableError(err.cause)) ctx.state.log?.warn({ err: err.cause }, 'dependency unavailable');
      } else if (isUnavailableError(err)) {
        ctx.state.log?.warn({ err }, 'dependency unavailable');
        apiError = errors.serviceUnavailable();
      } else {
        ctx.state.log?.error({ err }, 'unhandled error');
        apiError = errors.internal();
      }
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      ctx.body = apiError.toBody();
    }
  };
}
