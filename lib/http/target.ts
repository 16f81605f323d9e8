import { promises as dnsPromises } from 'node:dns';
import { classifyAddress, parseIPv6, toIPv4 } from './addresses';
import { OutboundBlockedError, OutboundError } from './outbound-errors';

/**
 * Where a URL may lead (lib/http/safe-fetch.ts): its scheme and shape checked, its host resolved, and every address
 * it resolved to classified (lib/http/addresses.ts) before anything connects. The checked addresses are the target's,
 * and the connection is pinned to them (lib/http/pinned-connection.ts).
 */

export interface Target {
  url: URL;
  /** Host name as in the URL (without IPv6 brackets), used for the Host header and TLS SNI. */
  hostname: string;
  /** Every address the host resolved to, all checked. */
  addresses: { address: string; family: 4 | 6 }[];
}

/** Error messages name only the origin: paths and query strings of webhook URLs often carry tokens. */
export function describe(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

export function parseUrl(raw: string, base?: URL): URL {
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

export async function resolveTarget(url: URL, allowLoopback: boolean, signal: AbortSignal): Promise<Target> {
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
