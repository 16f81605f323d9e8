import { describe, expect, it } from '@jest/globals';
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { type RouteDef, SENT_BY_HANDLER, mountRoutes, reply, route } from '../../api/route';
import { errorHandler } from '../../api/middleware/errors';
import { requestId } from '../../api/middleware/request-id';
import type { Db } from '../../lib/db';
import { createLogger } from '../../lib/logger';

const Created = z.object({ id: z.string(), tags: z.array(z.string()) });
const Accepted = z.object({ status: z.literal('accepted') });

/** A handler returns its route's declared response body; the status is the declared one (docs/decisions/158-typed-replies.md). */
const routes: RouteDef[] = [
  route({
    method: 'post',
    path: '/things',
    operationId: 'createThing',
    tag: 'Test',
    summary: 'Creates a thing; 202 when it is queued.',
    body: z.object({ queue: z.boolean() }),
    responses: {
      201: { description: 'Created', schema: Created },
      202: { description: 'Queued', schema: Accepted },
    },
    handler: async (_ctx, { body }) =>
      body.queue ? reply(202, { status: 'accepted' as const }) : { id: 't1', tags: ['a'] as const },
  }),
  route({
    method: 'get',
    path: '/things/file',
    operationId: 'thingFile',
    tag: 'Test',
    summary: 'Bytes, written by the handler itself.',
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
    handler: async (ctx) => {
      ctx.type = 'application/octet-stream';
      ctx.body = Buffer.from('bytes');
      return SENT_BY_HANDLER;
    },
  }),
];

// Compile-time checks: `npx tsc --noEmit` fails if any of these is accepted.
route({
  method: 'get',
  path: '/wrong',
  operationId: 'wrong',
  tag: 'Test',
  summary: 'A body that is not the declared schema.',
  responses: { 200: { description: 'OK', schema: Created } },
  // @ts-expect-error `id` must be a string
  handler: async () => ({ id: 1, tags: [] }),
});
route({
  method: 'get',
  path: '/wrong',
  operationId: 'wrongStatus',
  tag: 'Test',
  summary: 'A reply of a status the route does not declare.',
  responses: { 200: { description: 'OK', schema: Created } },
  // @ts-expect-error 202 is not declared
  handler: async () => reply(202, { status: 'accepted' as const }),
});
route({
  method: 'get',
  path: '/wrong',
  operationId: 'wrongHatch',
  tag: 'Test',
  summary: 'A JSON route may not bypass its schema.',
  responses: { 200: { description: 'OK', schema: Created } },
  // @ts-expect-error the escape hatch needs a response no schema describes
  handler: async () => SENT_BY_HANDLER,
});
route({
  method: 'get',
  path: '/wrong',
  operationId: 'wrongNothing',
  tag: 'Test',
  summary: 'A handler must answer.',
  responses: { 200: { description: 'OK', schema: Created } },
  // @ts-expect-error nothing returned
  handler: async (ctx) => {
    ctx.body = { id: 'x', tags: [] };
  },
});

describe('route replies', () => {
  it('sends the returned body with the declared success status, a reply with its own, the hatch as written', async () => {
    const app = new Koa();
    const router = new Router();
    app.use(requestId(createLogger('silent', 'test')));
    app.use(errorHandler());
    mountRoutes(router, routes, {
      db: {} as Db, // no key, no idempotency: the routes never reach the database
      config: { PUBLIC_BASE_URL: undefined, DASHBOARD_URL: undefined, PORT: 8080 },
    });
    app.use(router.routes());
    const server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things`;
      const post = (queue: boolean) =>
        fetch(base, {
          method: 'POST',
          body: JSON.stringify({ queue }),
          headers: { 'Content-Type': 'application/json' },
        });
      const created = await post(false);
      expect(created.status).toBe(201);
      expect(await created.json()).toEqual({ id: 't1', tags: ['a'] });
      const queued = await post(true);
      expect(queued.status).toBe(202);
      expect(await queued.json()).toEqual({ status: 'accepted' });
      const file = await fetch(`${base}/file`);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('application/octet-stream');
      expect(await file.text()).toBe('bytes');
    } finally {
      server.close();
    }
  });
});
