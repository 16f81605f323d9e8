import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  at: number;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
  status: number;
}

/**
 * A real HTTP server on loopback standing in for an integrator's webhook endpoint. `statuses` scripts the answers
 * (the last one repeats); `verify` checks a delivery the way the contract tells receivers to. `port`: listen on this one
 * (a receiver back up at the address of one that was closed); any free one by default.
 */
export async function startWebhookReceiver(statuses: number[] = [200], opts: { port?: number } = {}) {
  const received: ReceivedDelivery[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const status = statuses[Math.min(received.length, statuses.length - 1)];
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(rawBody);
      } catch {
        // recorded as is
      }
      received.push({ at: Date.now(), headers: req.headers, rawBody, body, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** Resolves when at least `n` deliveries have arrived, or rejects after `timeoutMs`. */
    async waitFor(n: number, timeoutMs = 20_000): Promise<ReceivedDelivery[]> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} deliveries, got ${received.length}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
      return received;
    },
    /** Stops listening and drops kept-alive connections: from now on the address refuses connections. */
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** The receiver's side of the contract's signature rule: HMAC over `<timestamp>.<raw body>`, 300 s tolerance. */
export function verifyDelivery(
  d: ReceivedDelivery,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const ts = String(d.headers['x-service-timestamp'] ?? '');
  const sig = String(d.headers['x-service-signature'] ?? '');
  if (!/^\d+$/.test(ts) || Math.abs(nowSeconds - Number(ts)) > 300 || !sig.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${d.rawBody}`).digest('hex');
  const got = sig.slice('sha256='.length);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}
