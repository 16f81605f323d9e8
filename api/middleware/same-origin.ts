import { ApiError } from '../../lib/errors';
import type { AppMiddleware } from '../context';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cookie-authenticated writes are refused from other sites, beyond what SameSite=Lax does (docs/decisions/055-cross-site-requests.md):
 * a browser names the page's site in `Sec-Fetch-Site` and `Origin` on every cross-origin
 * write, and either one naming another site is 403 `forbidden`; a body in anything but JSON or an image type (the
 * types an HTML form or a "simple" fetch can send without asking are neither) is 415 `unsupported_media_type`, but for
 * a multipart upload that the browser says comes from our own page. Clients that are not browsers send
 * neither header and are not affected.
 */
export function sameOriginWrites(opts: { allowedOrigins: () => string[] }): AppMiddleware {
  return async function sameOriginWritesMiddleware(ctx, next) {
    if (!SAFE_METHODS.has(ctx.method)) {
      const site = ctx.get('Sec-Fetch-Site');
      if (site && site !== 'same-origin' && site !== 'none') {
        throw new ApiError('forbidden', 'Cross-site requests cannot change anything here');
      }
      const origin = ctx.get('Origin');
      // Our own origin as the request reached us (through trusted proxies); Koa's `ctx.origin` echoes the header.
      const ours = `${ctx.protocol}://${ctx.host}`;
      if (origin && origin !== ours && !opts.allowedOrigins().includes(origin)) {
        throw new ApiError('forbidden', 'Cross-site requests cannot change anything here');
      }
      const length = Number(ctx.get('Content-Length') || 0);
      const hasBody = length > 0 || Boolean(ctx.get('Transfer-Encoding'));
      // An image (the inbox's attachments) is no type a form or a simple fetch can send either: it needs a preflight.
      // A multipart body (a file for the knowledge base) is what a form can send, so it is taken only with proof that
      // it comes from our own page: the browser said so (`Sec-Fetch-Site: same-origin`, or our `Origin`).
      const provenOurs = site === 'same-origin' || (Boolean(origin) && origin === ours);
      const ourUpload = provenOurs && Boolean(ctx.is('multipart/form-data'));
      if (hasBody && !ctx.is('application/json', 'image/*') && !ourUpload) {
        throw new ApiError(
          'unsupported_media_type',
          'Send the body as application/json (an image as its image/* type)',
        );
      }
    }
    await next();
  };
}
