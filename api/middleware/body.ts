import getRawBody from 'raw-body';
import { ApiError, errors } from '../../lib/errors';
import type { AppMiddleware } from '../context';

/**
 * Reads the request body once, under a per-route byte limit (contract, Limits: 1 MiB for `/v1/api/*`, 5 MiB for the
 * knowledge write, 256 KiB for trigger hooks). The raw bytes stay on `ctx.state.rawBody` for signature checks;
 * with `json` the body is parsed, and malformed JSON is 400 `bad_request`.
 */
export function readBody(opts: { limit: number; json: boolean }): AppMiddleware {
  return async function readBodyMiddleware(ctx, next) {
    const declared = Number(ctx.get('Content-Length') || NaN);
    if (Number.isFinite(declared) && declared > opts.limit) throw errors.payloadTooLarge(opts.limit);
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: opts.limit });
    } catch (err) {
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') throw errors.payloadTooLarge(opts.limit);
      if (type === 'request.aborted') throw new ApiError('bad_request', 'Request body was not received completely');
      throw err;
    }
    ctx.state.rawBody = raw;
    if (opts.json) {
      if (raw.length === 0) {
        (ctx.request as { body?: unknown }).body = undefined;
      } else {
        try {
          (ctx.request as { body?: unknown }).body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw errors.badRequest('Request body is not valid JSON');
        }
      }
    }
    await next();
  };
}
