import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Balancer, startBalancer } from '../../stack/balancer';

/**
 * The production shape's balancer (stack/balancer.ts) against replicas that are plain HTTP servers on loopback:
 * what a balancer in front of the API must do, shown.
 */
interface Replica {
  name: string;
  url: string;
  server: http.Server;
  /** Resolves the next event-stream piece (the test decides when each is written). */
  releasePiece?: () => void;
  close(): Promise<void>;
}

async function replica(name: string): Promise<Replica> {
  const r = {} as Replica;
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') return void res.end('ok');
    if (req.url === '/stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      let n = 0;
      const writeNext = () => {
        n += 1;
        res.write(`data: piece ${n}\n\n`);
        if (n === 3) return void res.end();
        r.releasePiece = writeNext;
      };
      writeNext();
      return;
    }
    if (req.url === '/die') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('half');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          replica: name,
          method: req.method,
          body: Buffer.concat(chunks).toString(),
          xff: req.headers['x-forwarded-for'],
          proto: req.headers['x-forwarded-proto'],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(r, {
    name,
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return r;
}

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});
afterAll(async () => undefined);

async function setup(n = 2): Promise<{ balancer: Balancer; replicas: Replica[] }> {
  const replicas = await Promise.all(Array.from({ length: n }, (_, i) => replica(`r${i + 1}`)));
  const balancer = await startBalancer({ port: 0, backends: replicas.map((r) => r.url), healthIntervalMs: 100 });
  started.push(balancer, ...replicas);
  return { balancer, replicas };
}

const json = async (res: Response) => (await res.json()) as Record<string, string>;

describe('the balancer in front of the API replicas', () => {
  it('takes turns between replicas and appends the client to X-Forwarded-For', async () => {
    const { balancer } = await setup();
    const seen: Record<string, string>[] = [];
    for (let i = 0; i < 4; i++) {
      seen.push(await json(await fetch(`${balancer.url}/x`, { headers: { 'X-Forwarded-For': '203.0.113.7' } })));
    }
    expect(seen.map((s) => s.replica)).toEqual(['r1', 'r2', 'r1', 'r2']);
    expect(seen[0].xff).toBe('203.0.113.7, 127.0.0.1');
    expect(seen[0].proto).toBe('http');
  });

  it('passes an event stream through piece by piece, without buffering it', async () => {
    const { balancer, replicas } = await setup(1);
    const res = await fetch(`${balancer.url}/stream`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    // The first piece arrives while the replica has not written the second: nothing waits for more.
    const first = decoder.decode((await reader.read()).value);
    expect(first).toBe('data: piece 1\n\n');
    replicas[0].releasePiece!();
    expect(decoder.decode((await reader.read()).value)).toBe('data: piece 2\n\n');
    replicas[0].releasePiece!();
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value);
    }
    expect(rest).toBe('data: piece 3\n\n');
  });

  it('a replica that is gone: requests, POSTs included, go to the other one with no failure', async () => {
    const { balancer, replicas } = await setup();
    await replicas[0].close();
    const answers: Record<string, string>[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${balancer.url}/turn`, { method: 'POST', body: `message ${i}` });
      expect(res.status).toBe(200);
      answers.push(await json(res));
    }
    expect(answers.map((a) => a.replica)).toEqual(['r2', 'r2', 'r2', 'r2']);
    expect(answers.map((a) => a.body)).toEqual(['message 0', 'message 1', 'message 2', 'message 3']);
    expect(balancer.healthy()).toEqual([replicas[1].url]);
  });

  it('with no replica left: 503 service_unavailable with Retry-After', async () => {
    const { balancer, replicas } = await setup();
    await Promise.all(replicas.map((r) => r.close()));
    const res = await fetch(`${balancer.url}/x`, { method: 'POST', body: 'hello' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'service_unavailable' });
  });

  it('a replica that dies mid-answer ends the client’s answer too, never a hang', async () => {
    const { balancer } = await setup(1);
    const res = await fetch(`${balancer.url}/die`);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('a replica whose health check fails leaves the rotation, and comes back', async () => {
    const { balancer, replicas } = await setup();
    const port = Number(new URL(replicas[0].url).port);
    await replicas[0].close();
    await new Promise((r) => setTimeout(r, 400));
    expect(balancer.healthy()).toEqual([replicas[1].url]);
    // The same address answers again.
    const back = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => back.listen(port, '127.0.0.1', resolve));
    started.push({ close: () => new Promise<void>((resolve) => back.close(() => resolve())) });
    await new Promise((r) => setTimeout(r, 400));
    expect(balancer.healthy().sort()).toEqual([replicas[0].url, replicas[1].url].sort());
  });
});

describe('connections', () => {
  it("tells clients its own keep-alive, never the replica's (hop-by-hop headers stay on their hop)", async () => {
    const { balancer, replicas } = await setup(1);
    // The API keeps idle connections 65 s (api/server.ts); the balancer closes its own idle clients after 4 s.
    replicas[0].server.keepAliveTimeout = 65_000;
    const res = await fetch(`${balancer.url}/anything`, {
      method: 'POST',
      body: 'x',
      headers: { Connection: 'keep-alive' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('keep-alive')).toBe('timeout=4');
    await res.text();
  });
});
