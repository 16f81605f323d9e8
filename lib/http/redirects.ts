/**
 * Redirects as the SSRF-safe client (lib/http/safe-fetch.ts) follows them: the request as the Fetch standard changes
 * it, and never a credential handed to another origin. The new URL is checked in full before it is requested.
 */

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Dropped when a redirect turns the request into a body-less GET (as in the Fetch standard).
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
// Credentials and signatures must not be handed to a different origin by a redirect.
const CROSS_ORIGIN_STRIPPED = /^(authorization|proxy-authorization|cookie)$|signature|secret|token|api[-_]?key/i;

/** What is sent, as a redirect changes it. */
export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

/** A status that redirects, with somewhere to go. */
export function isRedirect(status: number, location: string | undefined): location is string {
  return REDIRECT_STATUSES.has(status) && Boolean(location);
}

/** The request to send to `next` after a redirect with `status`. */
export function redirected(request: OutboundRequest, status: number, next: URL): OutboundRequest {
  let { method, headers, body } = request;
  if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    method = 'GET';
    body = undefined;
    headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !BODY_HEADERS.includes(n)));
  }
  if (next.origin !== request.url.origin) {
    headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !CROSS_ORIGIN_STRIPPED.test(n)));
  }
  return { url: next, method, headers, body };
}
