import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { parseConfig } from '../../lib/config';
import { freePort } from '../../stack/processes';
import {
  resendUnprocessedUpdate,
  temporalConnectionOptions,
  watchTemporalReturn,
  workflowUiUrl,
} from '../../lib/temporal';

const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', SECRET_ENCRYPTION_KEY: 'ab'.repeat(32) };

/**
 * One connection factory for every process (API, worker, agentctl): TLS with the mTLS certificate pair and the API
 * key reach each of them. The worker once built its connection itself and dropped the pair.
 */
describe('Temporal connection options', () => {
  it('plain: the address and nothing else', () => {
    const options = temporalConnectionOptions(parseConfig({ ...base, TEMPORAL_ADDRESS: 'temporal.internal:7233' }));
    expect(options).toEqual({ address: 'temporal.internal:7233', tls: undefined });
  });

  it('TLS with the mTLS pair read from the configured files, and the API key', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
    writeFileSync(path.join(dir, 'client.pem'), 'CERTIFICATE');
    writeFileSync(path.join(dir, 'client.key'), 'PRIVATE KEY');
    const options = temporalConnectionOptions(
      parseConfig({
        ...base,
        TEMPORAL_ADDRESS: 'ns.tmprl.cloud:7233',
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CERT_PATH: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY_PATH: path.join(dir, 'client.key'),
        TEMPORAL_API_KEY: 'temporal-api-key',
      }),
    );
    expect(options.address).toBe('ns.tmprl.cloud:7233');
    expect(options.apiKey).toBe('temporal-api-key');
    expect(options.tls?.clientCertPair?.crt.toString()).toBe('CERTIFICATE');
    expect(options.tls?.clientCertPair?.key.toString()).toBe('PRIVATE KEY');
  });

  it('TLS without a pair is server-verified TLS only', () => {
    const options = temporalConnectionOptions(parseConfig({ ...base, TEMPORAL_TLS: 'true' }));
    expect(options.tls).toEqual({ clientCertPair: undefined });
  });

  it('refuses half a certificate pair, even in a configuration not read by parseConfig', () => {
    const config = { ...parseConfig({ ...base, TEMPORAL_TLS: 'true' }), TEMPORAL_TLS_CERT_PATH: '/x/client.pem' };
    expect(() => temporalConnectionOptions(config)).toThrow(/TEMPORAL_TLS_KEY_PATH: is required/);
  });

  it('is what the worker, the API and agentctl connect with', () => {
    const source = (file: string) => readFileSync(path.join(__dirname, '..', '..', file), 'utf8');
    // The worker's own connection adds only its compression to the shared options (test/unit/worker-capacity.test.ts).
    expect(source('worker/main.ts')).toMatch(/NativeConnection\.connect\(workerConnectionOptions\(config\)\)/);
    expect(source('worker/deps.ts')).toMatch(/return \{ \.\.\.temporalConnectionOptions\(config\), grpcCompression:/);
    expect(source('lib/temporal.ts')).toMatch(/const options = \{ \.\.\.temporalConnectionOptions\(config\)/);
    for (const entry of ['api/server.ts', 'cli/agentctl.ts', 'worker/main.ts'])
      expect(source(entry)).toMatch(/createTemporal\(config/);
  });
});

/**
 * A self-hosted server whose certificate comes from a private CA and names another host than the address dialled:
 * TEMPORAL_TLS_CA_PATH and TEMPORAL_TLS_SERVER_NAME. The server here is a TLS gRPC endpoint on loopback with such a
 * certificate (made by openssl for the test) that answers every call with an empty message — enough for the client's
 * connection check, which is the TLS handshake that must verify the certificate against the CA and the name.
 */
describe('TLS with a private CA', () => {
  const SERVER_NAME = 'temporal.internal';
  let dir: string;
  let server: http2.Http2SecureServer;
  let address: string;
  const names: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-ca-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test-ca');
    openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${SERVER_NAME}`);
    writeFileSync(path.join(dir, 'san.ext'), `subjectAltName=DNS:${SERVER_NAME}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    );
    server = http2.createSecureServer({
      key: readFileSync(path.join(dir, 'server.key')),
      cert: readFileSync(path.join(dir, 'server.pem')),
    });
    server.on('secureConnection', (socket: TLSSocket) => names.push(String(socket.servername)));
    server.on('stream', (stream) => {
      stream.resume();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.alloc(5)); // one gRPC message: not compressed, 0 bytes long (an empty response)
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  // No retries: a refused handshake fails the connection check at its deadline.
  const connect = (env: Record<string, string>, connectTimeout = 3_000) =>
    Connection.connect({
      ...temporalConnectionOptions(parseConfig({ ...base, TEMPORAL_ADDRESS: address, TEMPORAL_TLS: 'true', ...env })),
      connectTimeout,
      interceptors: [],
    });

  it('connects with the server CA and the certificate name, sending that name', async () => {
    const connection = await connect({
      TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    });
    await connection.close();
    expect(names).toContain(SERVER_NAME);
  });

  it('refuses the certificate without the CA, or without the name', async () => {
    const before = names.length;
    await expect(connect({ TEMPORAL_TLS_SERVER_NAME: SERVER_NAME }, 1_000)).rejects.toThrow();
    await expect(connect({ TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem') }, 1_000)).rejects.toThrow();
    expect(names).toHaveLength(before); // neither handshake completed
  });
});

describe('run links to the Temporal UI', () => {
  it('point at TEMPORAL_UI_URL; without it there is none (no link to an address where no UI runs)', () => {
    const withUi = parseConfig({ ...base, TEMPORAL_UI_URL: 'https://temporal-ui.internal/' });
    expect(workflowUiUrl({ uiUrl: withUi.TEMPORAL_UI_URL, namespace: 'prod' }, 'run/run_1')).toBe(
      'https://temporal-ui.internal/namespaces/prod/workflows/run%2Frun_1',
    );
    for (const env of [base, { ...base, TEMPORAL_UI_URL: '' }]) {
      const config = parseConfig(env);
      expect(config.TEMPORAL_UI_URL).toBeUndefined();
      expect(workflowUiUrl({ uiUrl: config.TEMPORAL_UI_URL, namespace: 'default' }, 'run/run_1')).toBeNull();
    }
  });
});

describe('resendUnprocessedUpdate', () => {
  const unprocessed = () =>
    Object.assign(new Error('Update failed'), {
      cause: new Error(
        "Workflow Update is rejected because it wasn't processed by worker. Probably, Workflow Update is not supported by the worker.",
      ),
    });

  it('sends again an update the server dropped unseen, and gives back its result', async () => {
    let calls = 0;
    const result = await resendUnprocessedUpdate(async () => {
      calls++;
      if (calls < 3) throw unprocessed();
      return 'answered';
    });
    expect([result, calls]).toEqual(['answered', 3]);
  });

  it('does not resend any other failure, and stops after its attempts', async () => {
    let calls = 0;
    await expect(
      resendUnprocessedUpdate(async () => {
        calls++;
        throw new Error('handoff_disabled');
      }),
    ).rejects.toThrow('handoff_disabled');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      resendUnprocessedUpdate(
        async () => {
          calls++;
          throw unprocessed();
        },
        { attempts: 2 },
      ),
    ).rejects.toThrow('Update failed');
    expect(calls).toBe(2);
  });

  // What the server says (WorkflowNotReady) while the workflow's task has failed twice or more in a row.
  const taskFailing = () =>
    Object.assign(new Error('Update failed'), {
      cause: Object.assign(new Error('9 FAILED_PRECONDITION: Unable to perform workflow execution update'), {
        code: 9,
        details: 'Unable to perform workflow execution update due to Workflow Task in failed state.',
      }),
    });

  it("sends again, every interval for a while, an update refused because the workflow's task keeps failing", async () => {
    let calls = 0;
    const sentAt: number[] = [];
    const result = await resendUnprocessedUpdate(
      async () => {
        sentAt.push(Date.now());
        if (++calls < 6) throw taskFailing(); // more refusals than an unseen drop is sent again for
        return 'answered';
      },
      { failingTaskForMs: 1_000, failingTaskEveryMs: 50 },
    );
    expect([result, calls]).toEqual(['answered', 6]);
    expect(sentAt[5]! - sentAt[0]!).toBeGreaterThanOrEqual(5 * 45);

    calls = 0;
    const started = Date.now();
    await expect(
      resendUnprocessedUpdate(
        async () => {
          calls++;
          throw taskFailing();
        },
        { failingTaskForMs: 300, failingTaskEveryMs: 50 },
      ),
    ).rejects.toThrow('Update failed');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(calls).toBeGreaterThanOrEqual(5);
  });
});

/**
 * The worker starts a fresh worker when Temporal comes back from an outage (worker/supervisor.ts): the SDK's pollers
 * would otherwise ask again only up to 12 s later. The watch sees a plain HTTP/2 server here: a gRPC channel is up as
 * soon as one answers, with no request sent.
 */
describe('watchTemporalReturn', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let port: number;
  let server: http2.Http2Server | undefined;
  const sessions = new Set<http2.ServerHttp2Session>();

  async function serve(): Promise<void> {
    server = http2.createServer();
    server.on('session', (session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
  }
  async function stop(): Promise<void> {
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
  }

  beforeAll(async () => {
    port = await freePort();
  });
  afterAll(async () => {
    if (server) await stop();
  });

  it('reports a return after an outage within about a second, and neither a slow start nor a short drop', async () => {
    const returns: number[] = [];
    const watch = watchTemporalReturn(parseConfig({ ...base, TEMPORAL_ADDRESS: `127.0.0.1:${port}` }), {
      minOutageMs: 1_500,
      onReturn: (outageMs) => returns.push(outageMs),
      everyMs: 50,
    });
    try {
      await sleep(2_000); // nothing answers yet: a start, not an outage
      await serve();
      await sleep(1_000);
      expect(returns).toEqual([]);

      await stop(); // a short drop, as when the server closes an idle connection
      await sleep(200);
      await serve();
      await sleep(1_500);
      expect(returns).toEqual([]);

      await stop();
      await sleep(3_000);
      await serve();
      const back = Date.now();
      while (returns.length === 0 && Date.now() - back < 5_000) await sleep(20);
      expect(Date.now() - back).toBeLessThan(1_500);
      expect(returns).toHaveLength(1);
      expect(returns[0]).toBeGreaterThanOrEqual(3_000);
    } finally {
      await watch.stop();
    }
  }, 30_000);
});
