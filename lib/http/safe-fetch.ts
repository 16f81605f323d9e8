import http from 'node:http';
import { OutboundBlockedError, OutboundError } from './outbound-errors';
import { discard, readBody, responseHeaders, send } from './pinned-connection';
import { isRedirect, redirected } from './redirects';
import { describe, parseUrl, resolveTarget } from './target';

export { type AddressClass, classifyAddress, parseIPv4, parseIPv6 } from './addresses';
export { OutboundBlockedError, OutboundError, type OutboundErrorCode } from './outbound-errors';

/**
 * The platform's one outbound HTTP client for URLs that users control (webhooks, crawler, polls). It refuses
 * anything that is not a public unicast address, checks every resolved address and then pins the connection to
 * the checked address, so neither odd IP notations, DNS names pointing inside, DNS rebinding nor redirects can
 * reach internal services or cloud metadata endpoints.
 *
 * By concern: which addresses are public (addresses.ts), where a URL leads and whether it may (target.ts), the
 * connection pinned to the checked address and the body read within its limit (pinned-connection.ts), and how a
 * redirect changes the request (redirects.ts). This file holds the options and the loop that ties them together.
 */

export interface SafeFetchOptions {
  /** Allow 127/8 and ::1 (tests, local development). Every other internal range stays refused. */
  allowLoopback: boolean;
  userAgent?: string;
  defaultTimeoutMs?: number;
  defaultMaxBytes?: number;
  maxRedirects?: number;
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Total budget for DNS, connect, headers, body and all redirects. */
  timeoutMs?: number;
  maxBytes?: number;
  /**
   * A body over `maxBytes`: `error` (default) fails the request with `too_large`; `truncate` keeps the first
   * `maxBytes` and drops the rest (`truncated: true`) — for callers that only need the status, such as webhooks.
   */
  overflow?: 'error' | 'truncate';
  followRedirects?: boolean;
  signal?: AbortSignal;
}

export interface SafeResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** Final URL after redirects. */
  url: string;
  /** True when the body was cut at `maxBytes` (only with `overflow: 'truncate'`). */
  truncated?: boolean;
}

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<SafeResponse>;

// Framing is ours to set: a caller-supplied Host or Content-Length could desynchronise the request.
const CALLER_FORBIDDEN = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function intOption(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new TypeError(`${name} must be an integer >= ${min}`);
  return value;
}

export function createSafeFetch(opts: SafeFetchOptions): SafeFetch {
  const allowLoopback = opts.allowLoopback === true;
  const userAgent = opts.userAgent ?? 'agent-platform';
  const defaultTimeoutMs = intOption('defaultTimeoutMs', opts.defaultTimeoutMs, 10_000);
  const defaultMaxBytes = intOption('defaultMaxBytes', opts.defaultMaxBytes, 5 * 1024 * 1024, 0);
  const maxRedirects = intOption('maxRedirects', opts.maxRedirects, 5, 0);

  return async function safeFetch(rawUrl: string, init: SafeFetchInit = {}): Promise<SafeResponse> {
    const timeoutMs = intOption('timeoutMs', init.timeoutMs, defaultTimeoutMs);
    const maxBytes = intOption('maxBytes', init.maxBytes, defaultMaxBytes, 0);
    let method = (init.method ?? 'GET').toUpperCase();
    // Caller bugs are TypeErrors, not OutboundErrors, so they are never mistaken for something to retry.
    if (!METHOD_TOKEN.test(method)) throw new TypeError(`Invalid HTTP method`);
    let headers: Record<string, string> = { 'user-agent': userAgent };
    for (const [name, value] of Object.entries(init.headers ?? {})) {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
      if (!CALLER_FORBIDDEN.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    }
    let body = init.body;

    // One deadline for the whole exchange, redirects included.
    const deadline = new AbortController();
    const timeoutError = new OutboundError('timeout', `Request did not complete within ${timeoutMs} ms`);
    // setTimeout fires at once for delays beyond 2^31-1 ms, so clamp rather than time out immediately.
    const timer = setTimeout(() => deadline.abort(timeoutError), Math.min(timeoutMs, 2 ** 31 - 1));
    const callerSignal = init.signal;
    const onCallerAbort = () => deadline.abort(callerSignal!.reason);
    if (callerSignal?.aborted) onCallerAbort();
    else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const signal = deadline.signal;

    let url: URL | undefined;
    try {
      url = parseUrl(rawUrl);
      for (let redirects = 0; ; redirects++) {
        const target = await resolveTarget(url, allowLoopback, signal);
        const sendHeaders = { ...headers };
        if (body !== undefined) sendHeaders['content-length'] = String(Buffer.byteLength(body));
        const exchange = await send(target, method, sendHeaders, body, signal);
        const { res } = exchange;
        const status = res.statusCode ?? 0;
        const location = res.headers.location;

        if (isRedirect(status, location) && init.followRedirects !== false) {
          discard(exchange);
          if (redirects >= maxRedirects) {
            throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects`);
          }
          ({ url, method, headers, body } = redirected(
            { url, method, headers, body },
            status,
            parseUrl(location, url),
          ));
          continue; // the new URL is checked in full (scheme, credentials, DNS, address class) at the top of the loop
        }

        const expectBody = method !== 'HEAD' && status !== 204 && status !== 304 && !(status >= 100 && status < 200);
        const read = await readBody(exchange, maxBytes, expectBody, signal, init.overflow === 'truncate');
        return {
          status,
          headers: responseHeaders(res),
          body: read.body,
          url: url.href,
          ...(read.truncated ? { truncated: true } : {}),
        };
      }
    } catch (err) {
      if (err instanceof OutboundError || err instanceof OutboundBlockedError) throw err;
      if (signal.aborted) {
        // Our deadline: a timeout. The caller's own signal: its reason, as fetch() does.
        throw signal.reason === timeoutError ? timeoutError : signal.reason;
      }
      const detail = err instanceof Error ? err.message : String(err);
      const where = url ? ` to ${describe(url)}` : '';
      throw new OutboundError('network', `Outbound request${where} failed: ${detail}`, { cause: err });
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  };
}
