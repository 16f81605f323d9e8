import { describe, expect, it } from '@jest/globals';
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { buildOpenApi } from '../../api/openapi';
import { mountRoutes, route } from '../../api/route';
import { errorHandler } from '../../api/middleware/errors';
import { requestId } from '../../api/middleware/request-id';
import type { Db } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { retryAfterInProgress } from '../../api/middleware/idempotency';

/** Spec, Versioning rule 5: a route marked deprecated says so in the contract and in every response's headers. */
describe('deprecated routes', () => {
  const since = new Date('2026-06-01T00:00:00Z');
  const sunset = new Date('2027-01-01T00:00:00Z');
  const old = route({
    method: 'post',
    path: '/v1/api/old-thing',
    operationId: 'oldThing',
    tag: 'Test',
    summary: 'Something on its way out.',
    deprecated: { since, sunset, link: 'https://docs.example.test/migrate' },
    body: z.object({ n: z.number() }),
    responses: { 200: { description: 'OK', schema: z.object({ ok: z.boolean() }) } },
    handler: async () => ({ ok: true }),
  });

  it('the OpenAPI document marks the operation deprecated and documents the headers', () => {
    const op = buildOpenApi([old]).paths['/v1/api/old-thing'].post as Record<string, any>;
    expect(op.deprecated).toBe(true);
    expect(Object.keys(op.responses['200'].headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset']));
  });

  it('every response carries Deprecation and Sunset, errors included', async () => {
    const app = new Koa();
    const router = new Router();
    app.use(requestId(createLogger('silent', 'test')));
    app.use(errorHandler());
    mountRoutes(router, [old], {
      db: {} as Db, // no key, no idempotency: the route never reaches the database
      config: { PUBLIC_BASE_URL: undefined, DASHBOARD_URL: undefined, PORT: 8080 },
    });
    app.use(router.routes());
    const server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/api/old-thing`;
      for (const body of ['{"n":1}', '{"n":"not a number"}']) {
        const res = await fetch(base, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
        expect(res.headers.get('deprecation')).toBe(`@${since.getTime() / 1000}`);
        expect(res.headers.get('sunset')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
        expect(res.headers.get('link')).toBe(
          '<https://docs.example.test/migrate>; rel="deprecation"; type="text/html"',
        );
      }
    } finally {
      server.close();
    }
  });
});

describe('Retry-After of idempotency_in_progress', () => {
  const lease = { leaseSeconds: 15, renewSeconds: 5 };
  it('is a second while the owner renews its lease: the answer may come any moment', () => {
    expect(retryAfterInProgress(15, lease)).toBe(1);
    expect(retryAfterInProgress(9.5, lease)).toBe(1);
  });
  it('is the time until takeover once the owner missed a renewal', () => {
    expect(retryAfterInProgress(8.2, lease)).toBe(9);
    expect(retryAfterInProgress(0.3, lease)).toBe(1);
  });
  it('is a second when the lease has lapsed or is unknown', () => {
    expect(retryAfterInProgress(-3, lease)).toBe(1);
    expect(retryAfterInProgress(null, lease)).toBe(1);
  });
});
