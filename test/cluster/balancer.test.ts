import { afterAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Balancer, startBalancer } from '../../stack/balancer';
import { freePort } from '../../stack/processes';
import { http as request, newBot } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * The balancer of the production shape (Caddy with deploy/Caddyfile, the file operators copy: stack/balancer.ts)
 * over HTTP, as any client can speak to it:
 * - a request line that names another host (absolute form, or a path that starts with `//`) is a path a replica
 *   answers: the balancer never fetches that host;
 * - no request a client sends takes a replica out of rotation (not one naming a port nothing listens on, nor one
 *   with a malformed body): the next ordinary requests reach both replicas in turn;
 * - X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host reach a replica as the balancer saw the request, whatever
 *   the client wrote in them;
 * - the API replicas and the Temporal UI listen on loopback only: nobody reaches a replica around the balancer (where
 *   any X-Forwarded-For would be believed) nor the UI from another machine.
 * Round robin, a refused connection retried on the other replica, and streams piece by piece through this balancer:
 * replicas.test.ts, api-crash.test.ts, stream.test.ts.
 */
const replicas = () => (stackInfo() as ReturnType<typeof stackInfo> & { replicas: string[] }).replicas;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `head` (a request line and headers, no body framing needed) as-is on a socket to `base`; reads the answer. */
function raw(base: string, head: string, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`${head}\r\n\r\n${body}`));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer to ${head.split('\r\n')[0]}`)));
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const cut = text.indexOf('\r\n\r\n');
      if (cut < 0) return resolve({ status: 0, headers: {}, body: text }); // closed without an answer
      const [statusLine, ...lines] = text.slice(0, cut).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      let rest = text.slice(cut + 4);
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        let out = '';
        for (;;) {
          const nl = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, nl), 16);
          if (!size) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 2 + size + 2);
        }
        rest = out;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest });
    });
  });
}

/** Requests a replica has answered on `route` with `status` (its own `/metrics`). */
async function answered(replica: string, route: string, status: string): Promise<number> {
  const text = await (await fetch(`${replica}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_requests_total{') && l.includes(`route="${route}"`))
    .filter((l) => l.includes(`status="${status}"`))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

/** A plain HTTP server on loopback that counts what reaches it: a host no request through the balancer may reach. */
async function bait(): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('the bait answered');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('the balancer in front of the API replicas', () => {
  it('sends a request line naming another host to a replica as a path, and never fetches that host', async () => {
    const target = await bait();
    closers.push(target.close);
    const base = stackInfo().apiUrl;
    const host = new URL(base).host;
    const lines = [
      `GET http://127.0.0.1:${target.port}/latest/meta-data/ HTTP/1.1\r\nHost: 127.0.0.1:${target.port}`,
      `GET //127.0.0.1:${target.port}/latest/meta-data/ HTTP/1.1\r\nHost: ${host}`,
      `GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254`,
    ];
    for (const line of lines) {
      const res = await raw(base, `${line}\r\nAccept: application/json\r\nConnection: close`);
      // A replica's own answer for a path it does not have, in the API's error shape.
      expect({ line, status: res.status }).toEqual({ line, status: 404 });
      expect(JSON.parse(res.body)).toMatchObject({ code: 'not_found' });
    }
    expect(target.hits).toEqual([]);
  });

  it('lets no request take a replica out: the next ordinary requests reach both replicas in turn', async () => {
    const base = stackInfo().apiUrl;
    const host = new URL(base).host;
    const before = await Promise.all(replicas().map((r) => answered(r, '/readyz', '200')));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      // A path naming a port nothing listens on, then a body whose chunked framing is broken: a replica answers the
      // first (404), the balancer refuses the second; neither is the replica's failure.
      const nowhere = await raw(base, `GET //127.0.0.1:1/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close`);
      expect(nowhere.status).toBe(404);
      await raw(
        base,
        `POST /v1/api/chat HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nConnection: close`,
        'zz\r\n{"session_id":\r\n',
      );
      statuses.push((await fetch(`${base}/readyz`)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const after = await Promise.all(replicas().map((r) => answered(r, '/readyz', '200')));
    // Round robin: each replica answered some of the six (other files' requests may land in between).
    expect(after[0] - before[0]).toBeGreaterThanOrEqual(1);
    expect(after[1] - before[1]).toBeGreaterThanOrEqual(1);
    expect(after[0] - before[0] + after[1] - before[1]).toBeGreaterThanOrEqual(6);
  });

  it('replaces the X-Forwarded-For, -Proto and -Host a client sends with what the balancer saw', async () => {
    // A replica that shows what reached it, behind the balancer as the cluster runs it (the same starter and file).
    const seen: http.IncomingHttpHeaders[] = [];
    const replica = http.createServer((req, res) => {
      if (req.url === '/anything') seen.push(req.headers);
      res.end('ok');
    });
    await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => replica.close(() => resolve())));
    const balancer: Balancer = await startBalancer({
      port: await freePort(),
      backends: [`http://127.0.0.1:${(replica.address() as net.AddressInfo).port}`],
      dataDir: path.join(stackInfo().dataDir, 'headers-balancer'),
      name: 'headers-balancer',
      quiet: true,
    });
    closers.push(() => balancer.close());

    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${balancer.url}/anything`,
        {
          localAddress: '127.0.0.3',
          headers: {
            'X-Forwarded-For': '203.0.113.7',
            'X-Forwarded-Proto': 'https',
            'X-Forwarded-Host': 'evil.example',
          },
        },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(res).toBe(200);
    expect(seen.map((h) => [h['x-forwarded-for'], h['x-forwarded-proto'], h['x-forwarded-host']])).toEqual([
      ['127.0.0.3', 'http', new URL(balancer.url).host],
    ]);
  });

  it('answers as plain http to a client that claims https: its session cookie is not marked Secure', async () => {
    // The cluster's replicas trust X-Forwarded-Proto from the balancer (TRUST_PROXY): only what the balancer saw counts.
    const bot = await newBot();
    const res = await request('/v1/auth/login', {
      body: { email: bot.email, password: bot.password },
      headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example' },
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^ap_session=/);
    expect(cookie).not.toMatch(/;\s*secure/i);
  });

  it('keeps the API replicas and the Temporal UI off every address but loopback', async () => {
    const interfaces = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
    const outside = interfaces
      .filter((i) => !i.internal && !(i.family === 'IPv6' && i.address.startsWith('fe80:')))
      .map((i) => i.address);
    // A machine with no network of its own: another loopback address still tells 127.0.0.1 from every interface.
    if (!outside.length) outside.push('127.0.0.2');
    const parts = [
      ...replicas().map((url, i) => ({ part: `API replica ${i + 1}`, port: Number(new URL(url).port) })),
      { part: 'Temporal UI', port: Number(new URL(stackInfo().env.TEMPORAL_UI_URL).port) },
    ];
    const connects = (host: string, port: number) =>
      new Promise<string>((resolve) => {
        const socket = net.connect({ host, port, timeout: 5_000 });
        socket.on('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('timeout', () => {
          socket.destroy();
          resolve('timeout');
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
    for (const { part, port } of parts) {
      expect({ part, got: await connects('127.0.0.1', port) }).toEqual({ part, got: 'connected' });
      for (const host of outside) {
        expect({ part, host, got: await connects(host, port) }).toEqual({ part, host, got: 'ECONNREFUSED' });
      }
    }
  });
});
