import type { AppContext } from './context';

/**
 * Koa ⇄ Fetch: for handlers written against the web-standard `Request`/`Response` (the MCP SDK's transports). The
 * body is the raw body Koa already read and limited; headers go across as they came.
 */
export function toFetchRequest(ctx: AppContext, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  return new Request(`${ctx.protocol}://${ctx.host}${ctx.originalUrl}`, {
    method: ctx.method,
    headers,
    body: ctx.method === 'GET' || ctx.method === 'HEAD' ? undefined : new Uint8Array(body),
  });
}

/** Writes a Fetch `Response` to Koa: status, headers (Koa sets the length and framing itself) and the whole body. */
export async function sendFetchResponse(ctx: AppContext, response: Response): Promise<void> {
  ctx.status = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') ctx.set(name, value);
  });
  const body = Buffer.from(await response.arrayBuffer());
  ctx.body = body.length ? body : null;
}
