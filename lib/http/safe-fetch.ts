import { promises as dnsPromises } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/**
 * The platform's one outbound HTTP client for URLs that users control (webhooks, crawler, polls). It refuses
 * anything that is not a public unicast address, checks every resolved address and then pins the connection to
 * the checked address, so neither odd IP notations, DNS names pointing inside, DNS rebinding nor redirects can
 * reach internal services or cloud metadata endpoints.
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
  /** Bodies are never truncated: over the limit is an error. */
  truncated?: never;
}

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<SafeResponse>;

export type OutboundErrorCode = 'timeout' | 'too_large' | 'network' | 'too_many_redirects' | 'bad_url';

/** Refused by policy (address class, scheme, credentials). Final: retrying cannot succeed. */
export class OutboundBlockedError extends Error {
  readonly code = 'outbound_blocked' as const;
  constructor(
    readonly reason: string,
    message: string,
    /** The refused address, when the refusal is about an address. */
    readonly address?: string,
  ) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** Anything else that went wrong; callers branch on `code` ('network' and 'timeout' are worth retrying). */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Address classification
// ---------------------------------------------------------------------------------------------------------------

export interface AddressClass {
  allowed: boolean;
  reason?: string;
}

type Rule = [address: string, prefix: number, reason: string];

// First match wins, so single addresses come before the ranges that contain them (for a more useful reason).
const V4_RULES = (
  [
    ['169.254.169.254', 32, 'metadata'], // AWS, GCP, Azure, OCI, DigitalOcean...
    ['100.100.100.200', 32, 'metadata'], // Alibaba Cloud
    ['168.63.129.16', 32, 'metadata'], // Azure WireServer: publicly numbered but only reachable from inside Azure
    ['255.255.255.255', 32, 'broadcast'],
    ['0.0.0.0', 8, 'unspecified'], // connecting to 0.0.0.0 reaches the local host on Linux
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'carrier_grade_nat'],
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link_local'],
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'ietf_protocol_assignments'],
    ['192.0.2.0', 24, 'documentation'],
    ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'benchmark'],
    ['198.51.100.0', 24, 'documentation'],
    ['203.0.113.0', 24, 'documentation'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'],
  ] as Rule[]
).map(([ip, prefix, reason]) => ({ base: parseIPv4(ip)!, prefix, reason }));

const V6_RULES = (
  [
    ['::', 128, 'unspecified'],
    ['::1', 128, 'loopback'],
    ['fd00:ec2::254', 128, 'metadata'], // AWS IMDS over IPv6
    ['64:ff9b:1::', 48, 'nat64_local'], // local-use NAT64 (RFC 8215): translates into the operator's own network
    ['100::', 64, 'discard'],
    ['2001::', 32, 'teredo'], // tunnels to arbitrary IPv4 behind NATs; no legitimate target
    ['2001:db8::', 32, 'documentation'],
    ['2001::', 23, 'ietf_protocol_assignments'],
    ['3fff::', 20, 'documentation'],
    ['fc00::', 7, 'unique_local'],
    ['fe80::', 10, 'link_local'],
    ['fec0::', 10, 'site_local'],
    ['ff00::', 8, 'multicast'],
  ] as Rule[]
).map(([ip, prefix, reason]) => ({ base: parseIPv6(ip)!, prefix, reason }));

const V6_MAPPED = parseIPv6('::ffff:0:0')!; // ::ffff:a.b.c.d, the socket API's way of writing IPv4
const V6_NAT64 = parseIPv6('64:ff9b::')!; // well-known NAT64 prefix: the gateway connects to the embedded IPv4
const V6_6TO4 = parseIPv6('2002::')!; // 2002:AABB:CCDD::/48 tunnels to IPv4 AA.BB.CC.DD
const V6_GLOBAL_UNICAST = parseIPv6('2000::')!;
const V6_ALL = (1n << 128n) - 1n;

function inV4(ip: number, rule: { base: number; prefix: number }): boolean {
  if (rule.prefix === 0) return true;
  const mask = (0xffffffff << (32 - rule.prefix)) >>> 0;
  return ((ip & mask) >>> 0) === ((rule.base & mask) >>> 0);
}

function inV6(ip: bigint, base: bigint, prefix: number): boolean {
  const mask = (V6_ALL << BigInt(128 - prefix)) & V6_ALL;
  return (ip & mask) === (base & mask);
}

/**
 * Parses IPv4 the way inet_aton and the WHATWG URL parser do: 1 to 4 parts, each decimal, octal (leading 0) or
 * hex (0x), the last part filling the remaining bytes, so `2130706433`, `0177.0.0.1`, `0x7f.1` are all 127.0.0.1.
 * Returns the address as an unsigned 32-bit number, or null if it is not IPv4 in any notation.
 */
export function parseIPv4(input: string): number | null {
  const parts = input.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // WHATWG tolerates one trailing dot
  if (parts.length === 0 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const part of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) n = parseInt(part, 10);
    else return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - nums.length)) return null;
  let value = last;
  nums.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return value >>> 0;
}

function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Parses an IPv6 address (brackets and zone id tolerated) into a 128-bit integer, or null. */
export function parseIPv6(input: string): bigint | null {
  let s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  if (!net.isIPv6(s)) return null;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

function classifyV4(ip: number, allowLoopback: boolean): AddressClass {
  for (const rule of V4_RULES) {
    if (!inV4(ip, rule)) continue;
    if (rule.reason === 'loopback' && allowLoopback) return { allowed: true };
    return { allowed: false, reason: rule.reason };
  }
  return { allowed: true };
}

function classifyV6(ip: bigint, allowLoopback: boolean): AddressClass {
  const low32 = Number(ip & 0xffffffffn);
  // Addresses that carry an IPv4 address are judged by it, otherwise ::ffff:10.0.0.1 would slip through.
  if (inV6(ip, V6_MAPPED, 96)) return classifyV4(low32, allowLoopback);
  if (inV6(ip, V6_NAT64, 96)) return classifyV4(low32, false);
  if (inV6(ip, V6_6TO4, 16)) {
    const embedded = classifyV4(Number((ip >> 80n) & 0xffffffffn), false);
    if (!embedded.allowed) return embedded;
  }
  for (const rule of V6_RULES) {
    if (!inV6(ip, rule.base, rule.prefix)) continue;
    if (rule.reason === 'loopback' && allowLoopback) return { allowed: true };
    return { allowed: false, reason: rule.reason };
  }
  // Deprecated IPv4-compatible ::a.b.c.d: report the embedded class if it is internal, refuse in any case.
  if (inV6(ip, 0n, 96)) {
    const embedded = classifyV4(low32, false);
    return { allowed: false, reason: embedded.allowed ? 'reserved' : embedded.reason };
  }
  // Only 2000::/3 is allocated as global unicast; everything else is reserved or special-purpose.
  if (!inV6(ip, V6_GLOBAL_UNICAST, 3)) return { allowed: false, reason: 'reserved' };
  return { allowed: true };
}

/**
 * Decides whether an IP address may be connected to. Pure: no DNS. Anything that is not an IP address in some
 * notation is refused (`not_an_ip`), so callers fail closed.
 */
export function classifyAddress(ip: string, opts: { allowLoopback?: boolean } = {}): AddressClass {
  const allowLoopback = opts.allowLoopback === true;
  const v6 = parseIPv6(ip.trim());
  if (v6 !== null) return classifyV6(v6, allowLoopback);
  const v4 = parseIPv4(ip.trim());
  if (v4 !== null) return classifyV4(v4, allowLoopback);
  return { allowed: false, reason: 'not_an_ip' };
}

// ---------------------------------------------------------------------------------------------------------------
// Fetch
// ---------------------------------------------------------------------------------------------------------------

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Dropped when a redirect turns the request into a body-less GET (as in the Fetch standard).
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
// Credentials and signatures must not be handed to a different origin by a redirect.
const CROSS_ORIGIN_STRIPPED = /^(authorization|proxy-authorization|cookie)$|signature|secret|token|api[-_]?key/i;
// Framing is ours to set: a caller-supplied Host or Content-Length could desynchronise the request.
const CALLER_FORBIDDEN = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

interface Target {
  url: URL;
  /** Host name as in the URL (without IPv6 brackets), used for the Host header and TLS SNI. */
  hostname: string;
  /** Every address the host resolved to, all checked. */
  addresses: { address: string; family: 4 | 6 }[];
}

/** Error messages name only the origin: paths and query strings of webhook URLs often carry tokens. */
function describe(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function parseUrl(raw: string, base?: URL): URL {
  try {
    return new URL(raw, base);
  } catch {
    throw new OutboundError('bad_url', 'Invalid URL');
  }
}

function checkUrlShape(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const message = `Outbound request blocked: scheme ${url.protocol} is not allowed`;
    throw new OutboundBlockedError('scheme_not_allowed', message);
  }
  if (url.username || url.password) {
    const message = 'Outbound request blocked: URLs with credentials are not allowed';
    throw new OutboundBlockedError('credentials_in_url', message);
  }
  if (!url.hostname) throw new OutboundError('bad_url', 'URL has no host');
}

function blockedAddress(url: URL, address: string, reason: string): OutboundBlockedError {
  return new OutboundBlockedError(
    reason,
    `Outbound request to ${describe(url)} blocked: ${address} is not a public address (${reason})`,
    address,
  );
}

/** Rejects as soon as `signal` aborts, for steps that cannot be cancelled themselves (DNS lookup). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

async function resolveTarget(url: URL, allowLoopback: boolean, signal: AbortSignal): Promise<Target> {
  checkUrlShape(url);
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

  // IP literals are checked as they are; WHATWG URL has already turned 0x7f.1 and friends into dotted quads, and
  // parseIPv4 recognises them again should anything slip through.
  const v4 = net.isIPv6(hostname) ? null : parseIPv4(hostname);
  const literal = net.isIPv6(hostname) ? hostname : v4 !== null ? formatIPv4(v4) : null;
  if (literal !== null) {
    const verdict = classifyAddress(literal, { allowLoopback });
    if (!verdict.allowed) throw blockedAddress(url, literal, verdict.reason!);
    return { url, hostname: literal, addresses: [{ address: literal, family: net.isIPv6(literal) ? 6 : 4 }] };
  }

  let resolved: { address: string; family: number }[];
  try {
    resolved = await raceAbort(dnsPromises.lookup(hostname, { all: true, verbatim: true }), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new OutboundError('network', `Could not resolve ${hostname}: ${(err as Error).message}`, { cause: err });
  }
  if (resolved.length === 0) throw new OutboundError('network', `Could not resolve ${hostname}`);
  // One bad address is enough to refuse: otherwise the attacker just adds an internal A record next to a public one.
  for (const { address } of resolved) {
    const verdict = classifyAddress(address, { allowLoopback });
    if (!verdict.allowed) throw blockedAddress(url, address, verdict.reason!);
  }
  return {
    url,
    hostname,
    addresses: resolved.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })),
  };
}

/**
 * A `lookup` for net/tls that answers only with the addresses already checked, so the connection cannot go to
 * what a second DNS answer says (DNS rebinding). Supports `all: true`, which Node uses for happy eyeballs.
 */
function pinnedLookup(addresses: Target['addresses']): net.LookupFunction {
  return ((_host: string, options: { family?: number | string; all?: boolean }, callback: Function) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const matching = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    if (matching.length === 0) {
      const err = Object.assign(new Error(`No pinned IPv${family} address`), { code: 'ENOTFOUND' });
      process.nextTick(() => callback(err));
      return;
    }
    if (options.all) process.nextTick(() => callback(null, matching));
    else process.nextTick(() => callback(null, matching[0].address, matching[0].family));
  }) as unknown as net.LookupFunction;
}

interface Exchange {
  req: http.ClientRequest;
  res: http.IncomingMessage;
}

function send(
  target: Target,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal,
): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    const isHttps = target.url.protocol === 'https:';
    const options: https.RequestOptions = {
      protocol: target.url.protocol,
      hostname: target.hostname,
      port: target.url.port || (isHttps ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      method,
      headers,
      // A fresh agent per request: no pooled socket from an earlier, differently checked target, and no proxy.
      agent: false,
      lookup: pinnedLookup(target.addresses),
    };
    // SNI and certificate checks use the original name; IP literals get no SNI (RFC 6066).
    if (isHttps && net.isIP(target.hostname) === 0) options.servername = target.hostname;

    const req = (isHttps ? https : http).request(options);
    const onAbort = () => req.destroy(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('response', (res) => {
      signal.removeEventListener('abort', onAbort);
      resolve({ req, res });
    });
    // Stays attached after the response so late socket errors are not unhandled; reject is then a no-op.
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    if (signal.aborted) onAbort();
    req.end(body);
  });
}

function tooLarge(maxBytes: number): OutboundError {
  return new OutboundError('too_large', `Response body is larger than the limit of ${maxBytes} bytes`);
}

function discard({ req, res }: Exchange): void {
  res.destroy();
  req.destroy();
  res.socket?.destroy();
}

function readBody(exchange: Exchange, maxBytes: number, expectBody: boolean, signal: AbortSignal): Promise<Buffer> {
  const { res } = exchange;
  const declared = Number(res.headers['content-length']);
  // Refuse before reading a byte when the server announces too much (HEAD/204/304 announce without sending).
  if (expectBody && Number.isFinite(declared) && declared > maxBytes) {
    discard(exchange);
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        discard(exchange);
        reject(err);
      } else resolve(body!);
    };
    const onAbort = () => finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(tooLarge(maxBytes));
      chunks.push(chunk);
    });
    res.on('end', () => finish(null, Buffer.concat(chunks, size)));
    res.on('error', (err) => finish(err));
    res.on('close', () => finish(new Error('Connection closed before the response body was complete')));
    if (signal.aborted) onAbort();
  });
}

function responseHeaders(res: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

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

        if (REDIRECT_STATUSES.has(status) && location && init.followRedirects !== false) {
          discard(exchange);
          if (redirects >= maxRedirects) {
            throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects`);
          }
          const next = parseUrl(location, url);
          if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
            method = 'GET';
            body = undefined;
            headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !BODY_HEADERS.includes(n)));
          }
          if (next.origin !== url.origin) {
            headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !CROSS_ORIGIN_STRIPPED.test(n)));
          }
          url = next; // checked in full (scheme, credentials, DNS, address class) at the top of the loop
          continue;
        }

        const expectBody = method !== 'HEAD' && status !== 204 && status !== 304 && !(status >= 100 && status < 200);
        const responseBody = await readBody(exchange, maxBytes, expectBody, signal);
        return { status, headers: responseHeaders(res), body: responseBody, url: url.href };
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
