import { describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { ApiError, isUnavailableError } from '../../lib/errors';
import { turnError } from '../../lib/conversations/chat';
import { TurnNotSentError, failureOf } from '../../lib/conversations/turn';
import type { AppState } from '../../api/context';
import { errorHandler } from '../../api/middleware/errors';
import { requestId } from '../../api/middleware/request-id';

/** The error handler in a real Koa app on loopback: what a client sees when a handler throws unexpectedly. */
async function serve(handler: Koa.Middleware<AppState>) {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({ write: (chunk, _enc, cb) => (lines.push(chunk.toString()), cb()) }),
  );
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(requestId(logger));
  app.use(errorHandler());
  app.use(handler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, lines, close: () => new Promise((r) => server.close(r)) };
}

describe('error handler', () => {
  it('answers an unexpected exception with 500 internal_error, no internals, logged with the request id', async () => {
    const s = await serve(async () => {
      throw new Error('secret internals: password=hunter2 at /srv/app.ts:42');
    });
    try {
      const res = await fetch(`${s.url}/boom`, { headers: { 'X-Request-Id': 'req-500' } });
      const body = await res.json();
      expect(res.status).toBe(500);
      expect(body).toEqual({ error: expect.any(String), code: 'internal_error' });
      expect(JSON.stringify(body)).not.toContain('hunter2');
      expect(res.headers.get('x-request-id')).toBe('req-500');
      const logged = s.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'unhandled error');
      expect(logged).toMatchObject({ reqId: 'req-500', level: 50 });
    } finally {
      await s.close();
    }
  });

  it('answers a dependency that cannot be reached with 503 service_unavailable, and says when to retry', async () => {
    const s = await serve(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    try {
      const res = await fetch(`${s.url}/db`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
    } finally {
      await s.close();
    }
  });
});

describe('a chat turn that a dependency failed', () => {
  const temporalGone = () => Object.assign(new Error('14 UNAVAILABLE: Connection refused'), { code: 14 });

  it('answers 503 service_unavailable, logged, and keeps the Idempotency-Key on the same turn when the turn may have begun', async () => {
    const failure = failureOf(temporalGone())!;
    expect(failure).toMatchObject({ kind: 'unreachable', stillRunning: true, notSent: false });
    const thrown = turnError(failure, 'session-1');
    expect(thrown).toBeInstanceOf(ApiError);
    // The idempotency middleware keeps the key's generation: a retry sends the same update, which joins the turn.
    expect(thrown.turnPending).toBe(true);
    const s = await serve(async () => {
      throw thrown;
    });
    try {
      const res = await fetch(`${s.url}/v1/api/chat`, { headers: { 'X-Request-Id': 'req-503' } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
      const logged = s.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'dependency unavailable');
      expect(logged).toMatchObject({ reqId: 'req-503', level: 40 });
    } finally {
      await s.close();
    }
  });

  it('answers a turn known never to have reached a worker 503 on a new generation, and leaves any other failure as it is', async () => {
    const notSent = failureOf(new TurnNotSentError(temporalGone()))!;
    expect(notSent).toMatchObject({ kind: 'unreachable', stillRunning: false, notSent: true });
    // 503, and a new generation of the key: nothing of the turn was stored.
    const thrown = turnError(notSent, 'session-1');
    expect(thrown.turnPending).toBe(false);
    const s = await serve(async () => {
      throw thrown;
    });
    try {
      const res = await fetch(`${s.url}/v1/api/chat`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
    } finally {
      await s.close();
    }
    expect(failureOf(new Error('a bug'))).toBeNull();
  });
});

describe('isUnavailableError', () => {
  it('counts a Postgres Unix socket that is not there (a stopped server) as unavailable, and a missing file as not', async () => {
    const socketDir = path.join(os.tmpdir(), `no-postgres-${process.pid}`);
    const client = new pg.Client({
      host: socketDir,
      port: 5432,
      user: 'x',
      database: 'x',
      connectionTimeoutMillis: 1000,
    });
    const connectError = await client.connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(connectError).toMatchObject({ code: 'ENOENT' });
    expect(isUnavailableError(connectError)).toBe(true);

    const fileError = await readFile(path.join(socketDir, 'missing.txt')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(fileError).toMatchObject({ code: 'ENOENT' });
    expect(isUnavailableError(fileError)).toBe(false);
  });
});
