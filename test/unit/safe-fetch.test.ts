import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';

import { classifyAddress, createSafeFetch, parseIPv4 } from '../../lib/http/safe-fetch';
import { TEST_CERT, TEST_KEY } from '../support/tls-cert';

/**
 * Never sends traffic anywhere but loopback: refusals happen before connecting, public addresses are only ever
 * classified, and a guard on http(s).request fails the test (without connecting) if the client ever tries a host
 * outside the loopback allow-list below.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost', 'rebind.test']);
const attempted: string[] = [];

const realHttpRequest = http.request;
const realHttpsRequest = https.request;
function guard(real: typeof http.request) {
  return ((options: http.RequestOptions, ...rest: unknown[]) => {
    const host = String(options.hostname ?? options.host);
    attempted.push(host);
    if (!LOOPBACK_HOSTS.has(host)) throw new Error(`test guard: refused to connect to ${host}`);
    return (real as (...args: unknown[]) => http.ClientRequest).call(http, options, ...rest);
  }) as typeof http.request;
}

let server: http.Server;
let other: http.Server; // second origin, for cross-origin redirects
let base: string;
let otherBase: string;
const sockets = new Set<Socket>();
let streamedChunks = -1;

// Self-signed, test-only: lets the HTTPS test see the SNI the client sends (and that verification is on).

function listen(handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

function echo(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    const body = Buffer.concat(chunks).toString();
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });
}

beforeAll(async () => {
  jest.spyOn(http, 'request').mockImplementation(guard(realHttpRequest));
  jest.spyOn(https, 'request').mockImplementation(guard(realHttpsRequest));

  other = await listen(echo);
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;

  server = await listen((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const redirect = (status: number, location: string) => {
      res.writeHead(status, { location });
      res.end();
    };
    const hop = url.pathname.match(/^\/chain\/(\d+)$/);
    if (hop) return Number(hop[1]) === 0 ? res.end('end of chain') : redirect(302, `/chain/${Number(hop[1]) - 1}`);
    switch (url.pathname) {
      case '/ok':
        return res.end('hello');
      case '/echo':
        return echo(req, res);
      case '/to-private':
        return redirect(302, 'http://10.0.0.1/');
      case '/to-metadata':
        return redirect(302, 'http://169.254.169.254/latest/meta-data');
      case '/to-file':
        return redirect(302, 'file:///etc/passwd');
      case '/to-bad':
        return redirect(302, 'http://[::1');
      case '/see-other':
        return redirect(303, '/echo');
      case '/found':
        return redirect(302, '/echo');
      case '/temporary':
        return redirect(307, '/echo');
      case '/to-other':
        return redirect(307, `${otherBase}/echo`);
      case '/loop':
        return redirect(302, '/loop');
      case '/hang':
        return; // never answers; the socket is destroyed in afterAll
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        return; // headers and some body, then nothing
      case '/big-declared':
        res.writeHead(200, { 'content-length': '10000' });
        return res.end(Buffer.alloc(10_000, 1));
      case '/big-streamed': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked, no content-length
        let sent = 0;
        res.on('close', () => (streamedChunks = sent));
        const timer = setInterval(() => {
          if (res.destroyed || sent >= 20) {
            clearInterval(timer);
            return res.end();
          }
          res.write(Buffer.alloc(1000, 2));
          sent++;
        }, 5);
        return;
      }
      case '/exact':
        return res.end(Buffer.alloc(100, 3));
      default:
        res.statusCode = 404;
        return res.end();
    }
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  jest.restoreAllMocks();
  for (const s of sockets) s.destroy();
  await Promise.all([server, other].map((s) => new Promise((r) => s.close(r))));
});

beforeEach(() => {
  attempted.length = 0;
});

const strict = createSafeFetch({ allowLoopback: false });
const loose = createSafeFetch({ allowLoopback: true, userAgent: 'safe-fetch-test' });

describe('refused by default, before connecting', () => {
  it.each([
    // [url, reason]
    ['http://10.0.0.1/', 'private'],
    ['http://10.255.255.255/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.254/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.8.9.10:8080/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://169.254.1.1/', 'link_local'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://[febf:ffff::1]/', 'link_local'],
    ['http://100.64.0.1/', 'carrier_grade_nat'],
    ['http://100.127.255.255/', 'carrier_grade_nat'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://239.255.255.250/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0.1.2.3/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://198.18.0.1/', 'benchmark'],
    ['http://198.19.255.255/', 'benchmark'],
    ['http://192.0.2.1/', 'documentation'],
    ['http://198.51.100.7/', 'documentation'],
    ['http://203.0.113.9/', 'documentation'],
    ['http://[2001:db8::1]/', 'documentation'],
    ['http://[fc00::1]/', 'unique_local'],
    ['http://[fd12:3456::1]/', 'unique_local'],
    ['http://169.254.169.254/latest/meta-data', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://100.100.100.200/', 'metadata'],
    // IPv4 embedded in IPv6 is judged by the IPv4
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://[::ffff:169.254.169.254]/', 'metadata'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'metadata'],
    ['http://[64:ff9b::10.0.0.1]/', 'private'],
    ['http://[64:ff9b::7f00:1]/', 'loopback'],
    ['http://[::127.0.0.1]/', 'loopback'],
    ['http://[::10.0.0.1]/', 'private'],
    ['http://[2002:a00:1::1]/', 'private'], // 6to4 for 10.0.0.1
    ['http://[2002:a9fe:a9fe::]/', 'metadata'],
    ['http://[2002:7f00:1::]/', 'loopback'],
    // unusual IPv4 notations (normalised by WHATWG URL, recognised either way)
    ['http://2130706433/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://127.0.1/', 'loopback'],
    ['http://0xa.0.0.1/', 'private'],
    ['http://012.0.0.1/', 'private'],
    ['http://167772161/', 'private'],
    ['http://0xa9.0xfe.0xa9.0xfe/', 'metadata'],
    ['http://2852039166/', 'metadata'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://%31%32%37.0.0.1/', 'loopback'],
    ['https://127.0.0.1/', 'loopback'],
    ['http://127.0.0.1:1/', 'loopback'],
  ])('%s → %s', async (url, reason) => {
    await expect(strict(url)).rejects.toMatchObject({ code: 'outbound_blocked', reason });
    expect(attempted).toEqual([]);
  });

  it('refuses a host name resolving to loopback (localhost) without allowLoopback', async () => {
    const port = (server.address() as AddressInfo).port;
    await expect(strict(`http://localhost:${port}/ok`)).rejects.toMatchObject({
      code: 'outbound_blocked',
      reason: 'loopback',
    });
    expect(attempted).toEqual([]);
  });

  it('refuses when any one of the resolved addresses is internal', async () => {
    const lookup = jest.spyOn(dns.promises, 'lookup').mockResolvedValueOnce([
      { address: '127.0.0.1', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ] as never);
    try {
      await expect(loose('http://mixed.test/')).rejects.toMatchObject({ code: 'outbound_blocked', reason: 'private' });
    } finally {
      lookup.mockRestore();
    }
    expect(attempted).toEqual([]);
  });

  it.each([
    ['file:///etc/passwd', 'scheme_not_allowed'],
    ['ftp://127.0.0.1/', 'scheme_not_allowed'],
    ['gopher://127.0.0.1:70/', 'scheme_not_allowed'],
    ['data:text/plain,hi', 'scheme_not_allowed'],
    ['http://user:pass@127.0.0.1/', 'credentials_in_url'],
    ['http://user@127.0.0.1/', 'credentials_in_url'],
  ])('refuses %s (%s) even with allowLoopback', async (url, reason) => {
    await expect(loose(url)).rejects.toMatchObject({ code: 'outbound_blocked', reason });
    expect(attempted).toEqual([]);
  });

  it.each(['not a url', '', 'http://', 'http://[::1', 'http://1.2.3.4.5/'])('rejects %j as bad_url', async (url) => {
    await expect(loose(url)).rejects.toMatchObject({ code: 'bad_url' });
  });

  it('names the host a tenant wrote, never the internal address it resolved to (the address stays on the error)', async () => {
    const lookup = jest
      .spyOn(dns.promises, 'lookup')
      .mockResolvedValueOnce([{ address: '10.20.30.40', family: 4 }] as never);
    try {
      const err = (await loose('http://intranet.example.test/x').catch((e: Error) => e)) as Error & {
        address?: string;
      };
      expect(err.message).toContain('intranet.example.test');
      expect(err.message).not.toContain('10.20.30.40');
      expect(err.address).toBe('10.20.30.40');
    } finally {
      lookup.mockRestore();
    }
  });

  it('does not put the path or query of the URL in error messages', async () => {
    const err = await strict('http://10.0.0.1/hook?token=s3cret').catch((e: Error) => e);
    expect(String((err as Error).message)).not.toContain('s3cret');
  });
});

describe('redirects', () => {
  it.each([
    ['/to-private', 'private', '10.0.0.1'],
    ['/to-metadata', 'metadata', '169.254.169.254'],
  ])('%s: the redirect target is checked and refused before connecting', async (path, reason, address) => {
    await expect(loose(`${base}${path}`)).rejects.toMatchObject({ code: 'outbound_blocked', reason, address });
    expect(attempted).toEqual(['127.0.0.1']); // only the first hop was ever connected to
    expect(attempted).not.toContain(address);
  });

  it('refuses a redirect to a non-http scheme', async () => {
    await expect(loose(`${base}/to-file`)).rejects.toMatchObject({
      code: 'outbound_blocked',
      reason: 'scheme_not_allowed',
    });
  });

  it('reports an unparseable Location as bad_url', async () => {
    await expect(loose(`${base}/to-bad`)).rejects.toMatchObject({ code: 'bad_url' });
  });

  it('follows a chain and reports the final URL', async () => {
    const res = await loose(`${base}/chain/3`);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('end of chain');
    expect(res.url).toBe(`${base}/chain/0`);
    expect(attempted).toHaveLength(4);
  });

  it('follows exactly maxRedirects and fails on one more', async () => {
    const three = createSafeFetch({ allowLoopback: true, maxRedirects: 3 });
    await expect(three(`${base}/chain/3`)).resolves.toMatchObject({ status: 200 });
    await expect(three(`${base}/chain/4`)).rejects.toMatchObject({ code: 'too_many_redirects' });
  });

  it('gives up on a redirect loop', async () => {
    await expect(loose(`${base}/loop`)).rejects.toMatchObject({ code: 'too_many_redirects' });
    expect(attempted).toHaveLength(6); // first request + 5 redirects
  });

  it('returns the 3xx as is with followRedirects: false', async () => {
    const res = await loose(`${base}/to-private`, { followRedirects: false });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://10.0.0.1/');
    expect(res.url).toBe(`${base}/to-private`);
  });

  it.each([
    ['/see-other', 'POST', 'GET', ''],
    ['/found', 'POST', 'GET', ''],
    ['/temporary', 'POST', 'POST', 'payload'],
    ['/see-other', 'PUT', 'GET', ''],
    ['/found', 'PUT', 'PUT', 'payload'],
  ])('%s after %s continues as %s', async (path, method, expectedMethod, expectedBody) => {
    const res = await loose(`${base}${path}`, {
      method,
      body: 'payload',
      headers: { 'content-type': 'text/plain' },
    });
    const seen = JSON.parse(res.body.toString());
    expect(seen.method).toBe(expectedMethod);
    expect(seen.body).toBe(expectedBody);
    if (expectedBody === '') expect(seen.headers['content-type']).toBeUndefined();
  });

  it('keeps credentials on a same-origin redirect', async () => {
    const res = await loose(`${base}/temporary`, {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'Bearer abc', 'x-webhook-signature': 'sig' },
    });
    const seen = JSON.parse(res.body.toString());
    expect(seen.headers.authorization).toBe('Bearer abc');
    expect(seen.headers['x-webhook-signature']).toBe('sig');
  });

  it('strips Authorization, cookies and signature headers when the origin changes', async () => {
    const res = await loose(`${base}/to-other`, {
      method: 'POST',
      body: '{"a":1}',
      headers: {
        Authorization: 'Bearer abc',
        Cookie: 'a=b',
        'X-Webhook-Signature': 'sig',
        'Webhook-Signature': 'v1,sig',
        'X-Api-Key': 'k',
        'X-Request-Id': 'keep-me',
      },
    });
    expect(res.url).toBe(`${otherBase}/echo`);
    const seen = JSON.parse(res.body.toString());
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"a":1}');
    for (const h of ['authorization', 'cookie', 'x-webhook-signature', 'webhook-signature', 'x-api-key']) {
      expect(seen.headers[h]).toBeUndefined();
    }
    expect(seen.headers['x-request-id']).toBe('keep-me');
  });
});

describe('requests to loopback with allowLoopback', () => {
  it('GET', async () => {
    const res = await loose(`${base}/ok`);
    expect(res).toMatchObject({ status: 200, url: `${base}/ok` });
    expect(res.body.toString()).toBe('hello');
    expect(res.headers['content-length']).toBe('5');
  });

  it('POST with body and headers', async () => {
    const res = await loose(`${base}/echo?x=1`, {
      method: 'post',
      headers: { 'content-type': 'application/json', 'x-custom': 'yes' },
      body: Buffer.from('{"hello":"world"}'),
    });
    const seen = JSON.parse(res.body.toString());
    expect(seen).toMatchObject({ method: 'POST', url: '/echo?x=1', body: '{"hello":"world"}' });
    expect(seen.headers).toMatchObject({
      'content-type': 'application/json',
      'x-custom': 'yes',
      'content-length': '17',
      'user-agent': 'safe-fetch-test',
    });
  });

  it('ignores a caller-supplied Host header', async () => {
    const res = await loose(`${base}/echo`, { headers: { host: 'internal.example' } });
    expect(JSON.parse(res.body.toString()).headers.host).toBe(new URL(base).host);
  });

  it('connects over IPv6 loopback', async () => {
    const s = http.createServer((_req, res) => res.end('v6'));
    const ok = await new Promise<boolean>((resolve) => {
      s.once('error', () => resolve(false));
      s.listen(0, '::1', () => resolve(true));
    });
    if (!ok) return; // no IPv6 on this machine
    try {
      const res = await loose(`http://[::1]:${(s.address() as AddressInfo).port}/`);
      expect(res.body.toString()).toBe('v6');
    } finally {
      await new Promise((r) => s.close(r));
    }
  });

  it('resolves a host name to loopback and keeps it as the Host header', async () => {
    const port = (server.address() as AddressInfo).port;
    const res = await loose(`http://localhost:${port}/echo`);
    expect(JSON.parse(res.body.toString()).headers.host).toBe(`localhost:${port}`);
  });

  it('pins the checked address: no second DNS answer is used for the connection (rebinding)', async () => {
    const port = (server.address() as AddressInfo).port;
    // First answer is checked and pinned; any later lookup would get an internal address (or, via the system
    // resolver, fail for the reserved .test name), so success proves the connection used the pinned address.
    const lookup = jest
      .spyOn(dns.promises, 'lookup')
      .mockResolvedValueOnce([{ address: '127.0.0.1', family: 4 }] as never)
      .mockResolvedValue([{ address: '10.0.0.1', family: 4 }] as never);
    const callbackLookup = jest.spyOn(dns, 'lookup');
    try {
      const res = await loose(`http://rebind.test:${port}/echo`);
      expect(JSON.parse(res.body.toString()).headers.host).toBe(`rebind.test:${port}`);
      expect(lookup).toHaveBeenCalledTimes(1);
      expect(callbackLookup).not.toHaveBeenCalled();
    } finally {
      lookup.mockRestore();
      callbackLookup.mockRestore();
    }
  });
});

describe('https', () => {
  it('sends the original host name as SNI over the pinned address and verifies the certificate', async () => {
    const seen: string[] = [];
    const context = tls.createSecureContext({ key: TEST_KEY, cert: TEST_CERT });
    const s = https.createServer({
      key: TEST_KEY,
      cert: TEST_CERT,
      SNICallback: (name, cb) => {
        seen.push(name);
        cb(null, context);
      },
    });
    s.on('tlsClientError', () => undefined);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const lookup = jest
      .spyOn(dns.promises, 'lookup')
      .mockResolvedValueOnce([{ address: '127.0.0.1', family: 4 }] as never);
    try {
      const url = `https://rebind.test:${(s.address() as AddressInfo).port}/`;
      // Self-signed certificate: the client must refuse it (certificate checks are not weakened).
      const err = await loose(url).catch((e: { code: string; cause?: { code?: string } }) => e);
      expect(err).toMatchObject({ code: 'network' });
      expect((err as { cause?: { code?: string } }).cause?.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
      expect(seen).toEqual(['rebind.test']);
    } finally {
      lookup.mockRestore();
      await new Promise((r) => s.close(r));
    }
  });
});

describe('failures', () => {
  it('times out against a server that never answers', async () => {
    const started = Date.now();
    await expect(loose(`${base}/hang`, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('times out when the body stalls (the deadline covers the body)', async () => {
    await expect(loose(`${base}/slow-body`, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'timeout' });
  });

  it('uses defaultTimeoutMs', async () => {
    const quick = createSafeFetch({ allowLoopback: true, defaultTimeoutMs: 200 });
    await expect(quick(`${base}/hang`)).rejects.toMatchObject({ code: 'timeout' });
  });

  it('rejects with the caller signal reason when the caller aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => controller.abort(reason), 50);
    await expect(loose(`${base}/hang`, { signal: controller.signal })).rejects.toBe(reason);
  });

  it.each([
    ['declared by Content-Length', '/big-declared'],
    ['streamed without Content-Length', '/big-streamed'],
  ])('too_large when %s', async (_label, path) => {
    await expect(loose(`${base}${path}`, { maxBytes: 5000 })).rejects.toMatchObject({ code: 'too_large' });
  });

  it('closes the connection as soon as a streamed body goes over the limit', async () => {
    streamedChunks = -1;
    await expect(loose(`${base}/big-streamed`, { maxBytes: 3000 })).rejects.toMatchObject({ code: 'too_large' });
    for (let i = 0; i < 100 && streamedChunks < 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(streamedChunks).toBeGreaterThan(0);
    expect(streamedChunks).toBeLessThan(20); // the server saw the socket close before it finished sending
  });

  it('uses defaultMaxBytes', async () => {
    const small = createSafeFetch({ allowLoopback: true, defaultMaxBytes: 99 });
    await expect(small(`${base}/exact`)).rejects.toMatchObject({ code: 'too_large' });
  });

  it('accepts a body of exactly maxBytes', async () => {
    const res = await loose(`${base}/exact`, { maxBytes: 100 });
    expect(res.body).toHaveLength(100);
  });

  it('does not apply Content-Length to a HEAD response', async () => {
    const res = await loose(`${base}/big-declared`, { method: 'HEAD', maxBytes: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(0);
  });

  it('reports a refused connection as network', async () => {
    const closed = await listen(() => undefined);
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(loose(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'network' });
  });

  it('reports an unresolvable name as network', async () => {
    const lookup = jest
      .spyOn(dns.promises, 'lookup')
      .mockRejectedValueOnce(Object.assign(new Error('getaddrinfo ENOTFOUND nope.test'), { code: 'ENOTFOUND' }));
    try {
      await expect(loose('http://nope.test/')).rejects.toMatchObject({ code: 'network' });
    } finally {
      lookup.mockRestore();
    }
  });

  it('treats an invalid method or header as a caller bug (TypeError), not an outbound error', async () => {
    await expect(loose(`${base}/ok`, { method: 'GE T' })).rejects.toMatchObject({ name: 'TypeError' });
    await expect(loose(`${base}/ok`, { headers: { 'x-bad': 'a\r\nb' } })).rejects.toMatchObject({ name: 'TypeError' });
  });
});

describe('classifyAddress', () => {
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255', // just outside 172.16/12
    '172.32.0.1',
    '100.63.255.255', // just outside 100.64/10
    '100.128.0.1',
    '169.253.255.255',
    '198.17.255.255',
    '198.20.0.1',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808', // NAT64 of a public address
    '2002:808:808::1', // 6to4 of a public address
    '[2606:4700::1111]',
  ])('allows public %s', (ip) => {
    expect(classifyAddress(ip)).toEqual({ allowed: true });
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'site_local'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['64:ff9b:1::a00:1', 'nat64_local'],
    ['100::1', 'discard'],
    ['::8.8.8.8', 'reserved'], // deprecated IPv4-compatible
    ['4000::1', 'reserved'], // outside 2000::/3
    ['3fff::1', 'documentation'],
    ['192.0.0.8', 'ietf_protocol_assignments'],
    // non-canonical IPv4 notations
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['0x7F000001', 'loopback'],
    ['127.1', 'loopback'],
    ['10.1', 'private'],
    ['0', 'unspecified'],
    // not an IP at all: fail closed
    ['example.com', 'not_an_ip'],
    ['', 'not_an_ip'],
    ['256.0.0.1', 'not_an_ip'],
    ['1.2.3.4.5', 'not_an_ip'],
    ['0x1.0x100.0.0', 'not_an_ip'],
    ['08.0.0.1', 'not_an_ip'], // 8 is not an octal digit
    ['::ffff:1.2.3.256', 'not_an_ip'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(classifyAddress(ip)).toEqual({ allowed: false, reason });
  });

  it.each(['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1'])('allowLoopback allows %s', (ip) => {
    expect(classifyAddress(ip, { allowLoopback: true })).toEqual({ allowed: true });
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique_local'],
    ['64:ff9b::7f00:1', 'loopback'], // loopback through a NAT64 gateway is not our loopback
    ['2002:7f00:1::', 'loopback'],
  ])('allowLoopback still refuses %s (%s)', (ip, reason) => {
    expect(classifyAddress(ip, { allowLoopback: true })).toEqual({ allowed: false, reason });
  });

  it('parses IPv4 notations like the URL parser does', () => {
    for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1', '0x7f.1', '127.0.0.1.']) {
      expect(new URL(`http://${host}/`).hostname).toBe('127.0.0.1');
      expect(parseIPv4(host)).toBe(0x7f000001);
    }
  });
});
