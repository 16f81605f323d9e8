import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small HTTP load balancer for the production shape on one machine (`npm run cluster`): round-robin over the API
 * replicas that answer their health check. It is also the list of what a real balancer in front of the API (nginx,
 * HAProxy, a cloud load balancer) must do — README, "Scale it out":
 *
 * - health-check `GET /healthz` (a replica out of rotation within two failed checks, back after one good one);
 * - append the client's address to `X-Forwarded-For` and set `X-Forwarded-Proto`, and run the API with
 *   `TRUST_PROXY=true` (and `TRUST_PROXY_HOPS` = the number of proxies that append): otherwise every visitor of a key
 *   shares one rate budget, the balancer's;
 * - never buffer `text/event-stream`: a streamed answer must reach the visitor piece by piece (nginx:
 *   `proxy_buffering off`, or the API's `X-Accel-Buffering: no`);
 * - keep its idle timeout to the replicas under the API's keep-alive (65 s), so it never sends a request on a
 *   connection the replica is closing, and never pass hop-by-hop headers on (`Keep-Alive`, `Connection`, …): the
 *   client must hear the balancer's own keep-alive, not the replica's;
 * - retry a request on another replica only when the connection was refused (nothing reached the replica): a POST
 *   that reached one may have started a turn, and a blind retry would start another (the API's Idempotency-Key is
 *   the client's tool for that).
 *
 * temporal-config/README.md, "A balancer in front of the API replicas", says the same for nginx and HAProxy.
 */
export interface Balancer {
  url: string;
  port: number;
  /** The replicas in rotation now. */
  healthy(): string[];
  setBackends(backends: string[]): void;
  close(): Promise<void>;
}

export interface BalancerOptions {
  port: number;
  host?: string;
  /** `http://127.0.0.1:PORT` of each replica. */
  backends: string[];
  healthPath?: string;
  healthIntervalMs?: number;
  log?: (message: string) => void;
}

interface Backend {
  url: URL;
  up: boolean;
  failures: number;
}

const UNAVAILABLE = JSON.stringify({ error: 'No API replica is available', code: 'service_unavailable' });
/** Errors that mean nothing of the request reached the replica. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** RFC 9110 7.6.1: headers meant for one connection only, and those a `Connection` header names. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.includes(name) && !named.includes(name)) out[name] = value;
  }
  return out;
}

export async function startBalancer(opts: BalancerOptions): Promise<Balancer> {
  const log = opts.log ?? (() => undefined);
  let backends: Backend[] = [];
  const setBackends = (urls: string[]) => {
    backends = urls.map(
      (u) =>
        backends.find((b) => b.url.href === new URL(u).href) ?? {
          url: new URL(u),
          up: true,
          failures: 0,
        },
    );
  };
  setBackends(opts.backends);
  // Idle connections to replicas close (3 s) long before the replica's own keep-alive (65 s) would close them.
  const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000, timeout: 3000, maxFreeSockets: 64 });
  let next = 0;

  const markDown = (b: Backend, why: string) => {
    if (b.up) log(`replica ${b.url.host} out of rotation: ${why}`);
    b.up = false;
    b.failures = 2;
  };

  const check = async (b: Backend) => {
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get(new URL(opts.healthPath ?? '/healthz', b.url), { timeout: 2000, agent }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
    });
    if (ok) {
      if (!b.up) log(`replica ${b.url.host} back in rotation`);
      b.up = true;
      b.failures = 0;
    } else if (++b.failures >= 2) markDown(b, 'health check failed');
  };
  const timer = setInterval(() => void Promise.all(backends.map(check)), opts.healthIntervalMs ?? 1000);
  timer.unref();

  const pick = (tried: Set<Backend>): Backend | undefined => {
    const candidates = backends.filter((b) => b.up && !tried.has(b));
    if (!candidates.length) return undefined;
    return candidates[next++ % candidates.length];
  };

  const server = http.createServer((req, res) => {
    const clientIp = req.socket.remoteAddress ?? '';
    const headers = withoutHopByHop(req.headers);
    const forwarded = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = forwarded ? `${forwarded}, ${clientIp}` : clientIp;
    headers['x-forwarded-proto'] ??= 'http';
    headers['x-forwarded-host'] ??= req.headers.host ?? '';
    // The request body is held only until a replica accepts the connection (a refused one means sending it again
    // elsewhere); from then on it goes through as it arrives.
    const tried = new Set<Backend>();
    const held: Buffer[] = [];
    let holding = true;
    let bodyEnded = false;
    let current: http.ClientRequest | null = null;
    req.on('data', (chunk: Buffer) => {
      if (holding) held.push(chunk);
      current?.write(chunk);
    });
    req.on('end', () => {
      bodyEnded = true;
      current?.end();
    });

    const attempt = () => {
      const backend = pick(tried);
      if (!backend) {
        res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
        res.end(UNAVAILABLE);
        return;
      }
      tried.add(backend);
      let connected = false;
      const upstream = http.request(
        new URL(req.url ?? '/', backend.url),
        { method: req.method, headers, agent },
        (answer) => {
          // Piece by piece, as it comes: no buffering of event streams (or anything else).
          // Hop-by-hop headers describe the replica's connection to the balancer, not the client's: forwarding the
          // API's `Keep-Alive: timeout=65` told clients to reuse connections this server closes after 4 s.
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.headers));
          res.flushHeaders();
          answer.pipe(res);
          answer.on('aborted', () => res.destroy());
          answer.on('error', () => res.destroy());
        },
      );
      const onConnected = () => {
        connected = true;
        holding = false;
        held.length = 0;
      };
      upstream.on('socket', (socket: Socket) => {
        socket.setNoDelay(true);
        if (!socket.connecting) onConnected();
        else socket.once('connect', onConnected);
      });
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected && NOT_CONNECTED.has(err.code ?? '') && !res.headersSent) {
          markDown(backend, err.code ?? 'connection failed');
          attempt(); // nothing reached this replica: another may take the request
          return;
        }
        if (!res.headersSent) {
          res.writeHead(502, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: 'The API replica failed mid-request', code: 'service_unavailable' }));
        } else {
          res.destroy();
        }
      });
      // The client went away: so does the request to the replica.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      current = upstream;
      for (const chunk of held) upstream.write(chunk);
      if (bodyEnded) upstream.end();
    };
    attempt();
  });
  server.keepAliveTimeout = 4000;
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'}:${port}`,
    port,
    healthy: () => backends.filter((b) => b.up).map((b) => b.url.origin),
    setBackends,
    async close() {
      clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
