import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { OutboundError } from './outbound-errors';
import type { Target } from './target';

/**
 * The connection of the SSRF-safe client (lib/http/safe-fetch.ts): a fresh one per request, pinned to the addresses
 * already checked (lib/http/target.ts), and its response read within a byte limit.
 */

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

export interface Exchange {
  req: http.ClientRequest;
  res: http.IncomingMessage;
}

export function send(
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

export function discard({ req, res }: Exchange): void {
  res.destroy();
  req.destroy();
  res.socket?.destroy();
}

export function readBody(
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

export function responseHeaders(res: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
