import ipaddr from 'ipaddr.js';
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

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const cidrs = (...ranges: string[]): Cidr[] => ranges.map((range) => ipaddr.parseCIDR(range));

// Checked before ipaddr.js's own range names, first match wins: cloud metadata endpoints it does not know, and finer
// reasons than its catch-all 'reserved' (and 'rfc6052', which lumps local-use NAT64 in with the well-known prefix).
const NAMED_RANGES: Record<string, Cidr[]> = {
  metadata: cidrs(
    '169.254.169.254/32', // AWS, GCP, Azure, OCI, DigitalOcean...
    '100.100.100.200/32', // Alibaba Cloud
    '168.63.129.16/32', // Azure WireServer: publicly numbered but only reachable from inside Azure
    'fd00:ec2::254/128', // AWS IMDS over IPv6
  ),
  teredo: cidrs('2001::/32'), // before 2001::/23 that contains it; tunnels to arbitrary IPv4 behind NATs
  ietf_protocol_assignments: cidrs('192.0.0.0/24', '2001::/23'),
  documentation: cidrs('192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32', '3fff::/20'),
  benchmark: cidrs('198.18.0.0/15'),
  nat64_local: cidrs('64:ff9b:1::/48'), // RFC 8215: translates into the operator's own network
};

// ipaddr.js range names → reason, null for public. Every other name (its 'reserved', SIIT's rfc6145, segment routing,
// and whatever a newer ipaddr.js adds) is refused as 'reserved'. IPv4-mapped and NAT64 never get here (classifyV6).
const RANGE_REASONS: Record<string, string | null> = {
  unicast: null,
  '6to4': null, // only reached once classifyV6 has found the embedded IPv4 public
  as112: null, // globally routed anycast services (RFC 7534, RFC 7450): as public as any other address
  as112v6: null,
  amt: null,
  unspecified: 'unspecified', // connecting to 0.0.0.0 reaches the local host on Linux
  broadcast: 'broadcast',
  multicast: 'multicast',
  loopback: 'loopback',
  linkLocal: 'link_local',
  private: 'private',
  carrierGradeNat: 'carrier_grade_nat',
  uniqueLocal: 'unique_local',
  deprecatedSiteLocal: 'site_local',
  discard: 'discard',
};

const V6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3'); // the only allocated unicast space
const V6_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96'); // well-known NAT64: the gateway connects to the embedded IPv4
const V6_IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96'); // deprecated ::a.b.c.d

/**
 * Parses IPv4 the way inet_aton and the WHATWG URL parser do: 1 to 4 parts, each decimal, octal (leading 0) or
 * hex (0x), the last part filling the remaining bytes, so `2130706433`, `0177.0.0.1`, `0x7f.1` are all 127.0.0.1.
 * One difference: a bare `0x` part (WHATWG reads 0) is not IPv4 here, so classifyAddress refuses it as not_an_ip.
 */
function toIPv4(input: string): ipaddr.IPv4 | null {
  // WHATWG URL tolerates one trailing dot (127.0.0.1.), ipaddr.js does not.
  const s = input.endsWith('.') ? input.slice(0, -1) : input;
  return ipaddr.IPv4.isValid(s) ? ipaddr.IPv4.parse(s) : null;
}

/** IPv4 in any notation (see toIPv4) as an unsigned 32-bit number, or null if it is not IPv4. */
export function parseIPv4(input: string): number | null {
  return toIPv4(input)?.octets.reduce((n, octet) => n * 256 + octet, 0) ?? null;
}

/** Parses an IPv6 address (brackets and zone id tolerated), or returns null. */
export function parseIPv6(input: string): ipaddr.IPv6 | null {
  const s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  // Node's strict syntax first: ipaddr.js also takes octal-looking octets in a dotted tail and reads them as decimal
  // (::ffff:0177.0.0.1 would pass as 177.0.0.1).
  if (!net.isIPv6(s) || !ipaddr.IPv6.isValid(s)) return null;
  const addr = ipaddr.IPv6.parse(s);
  // ipaddr.js reads the deprecated IPv4-compatible ::a.b.c.d (glibc's spelling of ::/96) as IPv4-mapped ::ffff:a.b.c.d,
  // which would let ::8.8.8.8 pass as 8.8.8.8.
  if (/^::[^:]*\./.test(s)) return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, addr.parts[6], addr.parts[7]]);
  return addr;
}

function embeddedIPv4(addr: ipaddr.IPv6, byteOffset: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(addr.toByteArray().slice(byteOffset, byteOffset + 4));
}

function byReason(reason: string | null, allowLoopback: boolean): AddressClass {
  if (reason === null || (reason === 'loopback' && allowLoopback)) return { allowed: true };
  return { allowed: false, reason };
}

function rangeReason(addr: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const named = ipaddr.subnetMatch(addr, NAMED_RANGES, '');
  if (named) return named;
  const range = addr.range();
  return range in RANGE_REASONS ? RANGE_REASONS[range] : 'reserved';
}

function classifyV4(addr: ipaddr.IPv4, allowLoopback: boolean): AddressClass {
  return byReason(rangeReason(addr), allowLoopback);
}

function classifyV6(addr: ipaddr.IPv6, allowLoopback: boolean): AddressClass {
  // Addresses that carry an IPv4 address are judged by it, otherwise ::ffff:10.0.0.1 would slip through.
  if (addr.isIPv4MappedAddress()) return classifyV4(addr.toIPv4Address(), allowLoopback);
  if (addr.match(V6_NAT64)) return classifyV4(embeddedIPv4(addr, 12), false);
  if (addr.range() === '6to4') {
    const embedded = classifyV4(embeddedIPv4(addr, 2), false); // 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD
    if (!embedded.allowed) return embedded;
  }
  const reason = rangeReason(addr);
  if (reason !== null) return byReason(reason, allowLoopback);
  // Deprecated IPv4-compatible ::a.b.c.d: report the embedded class if it is internal, refuse in any case.
  if (addr.match(V6_IPV4_COMPATIBLE)) {
    const embedded = classifyV4(embeddedIPv4(addr, 12), false);
    return { allowed: false, reason: embedded.allowed ? 'reserved' : embedded.reason };
  }
  // ipaddr.js calls all of the rest 'unicast', unallocated space included.
  if (!addr.match(V6_GLOBAL_UNICAST)) return { allowed: false, reason: 'reserved' };
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
  const v4 = toIPv4(ip.trim());
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

/**
 * The refusal names the host as the caller wrote it, never the address a name resolved to: the message reaches
 * tenants (scan rows, the run log, tool results), and an internal address is exactly what they must not learn. The
 * address stays on the error for the platform's own logs.
 */
function blockedAddress(url: URL, address: string, reason: string, resolved: boolean): OutboundBlockedError {
  const what = resolved
    ? `${url.hostname} resolves to an address that is not public`
    : `${address} is not a public address`;
  return new OutboundBlockedError(reason, `Outbound request to ${describe(url)} blocked: ${what} (${reason})`, address);
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
  // toIPv4 recognises them again should anything slip through.
  const ip = parseIPv6(hostname) ?? toIPv4(hostname);
  if (ip !== null) {
    const literal = ip.kind() === 'ipv6' ? hostname : ip.toString();
    const verdict = classifyAddress(literal, { allowLoopback });
    if (!verdict.allowed) throw blockedAddress(url, literal, verdict.reason!, false);
    return { url, hostname: literal, addresses: [{ address: literal, family: ip.kind() === 'ipv6' ? 6 : 4 }] };
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
    if (!verdict.allowed) throw blockedAddress(url, address, verdict.reason!, true);
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
  return ((
    _host: string,
    options: { family?: number | string; all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
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

function readBody(
  exchange: Exchange,
  maxBytes: number,
  expectBody: boolean,
  signal: AbortSignal,
  truncate = false,
): Promise<{ body: Buffer; truncated: boolean }> {
  const { res } = exchange;
  const declared = Number(res.headers['content-length']);
  // Refuse before reading a byte when the server announces too much (HEAD/204/304 announce without sending).
  if (!truncate && expectBody && Number.isFinite(declared) && declared > maxBytes) {
    discard(exchange);
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise<{ body: Buffer; truncated: boolean }>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: unknown, body?: Buffer, truncated = false) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        discard(exchange);
        reject(err);
      } else {
        // A cut body: the rest is not read; the connection is dropped rather than drained.
        if (truncated) discard(exchange);
        resolve({ body: body!, truncated });
      }
    };
    const onAbort = () => finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) {
        if (!truncate) return finish(tooLarge(maxBytes));
        chunks.push(chunk.subarray(0, maxBytes - size));
        return finish(null, Buffer.concat(chunks, maxBytes), true);
      }
      size += chunk.length;
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
