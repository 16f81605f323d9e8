import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, newBot, sseFrames, testDb } from '../support/helpers';
import { startInProcessApi } from '../support/in-process-api';

describe('service endpoints', () => {
  it('GET /healthz answers 200 with a status', async () => {
    const res = await http('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 when Postgres and Temporal answer', async () => {
    const res = await http('/readyz');
    expect(res.status).toBe(200);
    expect(res.body.checks).toEqual({ postgres: 'ok', temporal: 'ok' });
  });

  it('GET /metrics is Prometheus text with request counters', async () => {
    await http('/healthz');
    const res = await http('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  });

  it('GET /metrics times what a streamed answer is waited for: its first frame and its end', async () => {
    // An API of its own, so that its metrics hold this test's streams only.
    const api = await startInProcessApi({});
    try {
      const bot = await newBot();
      // The model's first piece after 300 ms, its last at 600 ms.
      await testDb().query(`UPDATE bots SET model = 'fake-pace-300-600' WHERE id = $1`, [bot.bot_id]);
      const streamed = await sseFrames('/v1/api/chat/stream', {
        key: bot.keys.secret_key,
        body: { session_id: randomUUID(), message: 'How long does delivery take?' },
        baseUrl: api.url,
      });
      expect(streamed.frames.at(0)).toHaveProperty('delta');
      const metrics = (await http('/metrics', { baseUrl: api.url })).text;
      const sample = (name: string, labels: string) =>
        Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
      const first = 'route="/v1/api/chat/stream",frame="delta"';
      expect(sample('http_stream_first_frame_seconds_count', first)).toBe(1);
      expect(sample('http_stream_first_frame_seconds_sum', first)).toBeGreaterThanOrEqual(0.3);
      expect(sample('http_stream_first_frame_seconds_bucket', `le="0.25",${first}`)).toBe(0);
      const end = 'route="/v1/api/chat/stream"';
      expect(sample('http_stream_duration_seconds_count', end)).toBe(1);
      expect(sample('http_stream_duration_seconds_sum', end)).toBeGreaterThanOrEqual(0.6);
      // The response itself was set before the turn ran: its duration is not the answer's.
      expect(sample('http_request_duration_seconds_sum', 'method="POST",route="/v1/api/chat/stream"')).toBeLessThan(
        sample('http_stream_first_frame_seconds_sum', first),
      );
    } finally {
      await api.close();
    }
  });
});

describe('X-Request-Id', () => {
  it('is generated when the client sends none', async () => {
    const res = await http('/healthz');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps a client id of 64 allowed characters', async () => {
    const id = `Ab9-_.:${'x'.repeat(57)}`;
    expect(id).toHaveLength(64);
    const res = await http('/healthz', { headers: { 'X-Request-Id': id } });
    expect(res.headers.get('x-request-id')).toBe(id);
  });

  it.each([
    ['65 characters', 'y'.repeat(65)],
    ['a space', 'has space'],
    ['a slash', 'a/b'],
    ['non-Latin letters', 'идентификатор'],
  ])('replaces a client id with %s', async (_label, id) => {
    const res = await http('/healthz', {
      headers: { 'X-Request-Id': encodeURIComponent(id) === id ? id : encodeURI(id) },
    });
    const got = res.headers.get('x-request-id');
    expect(got).not.toBe(id);
    expect(got).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is on error responses too', async () => {
    const res = await http('/v1/api/messages', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('trace-123');
  });
});

describe('one error shape', () => {
  it('unknown routes are 404 not_found', async () => {
    const res = await http('/v1/api/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.any(String), code: 'not_found' });
  });

  it('malformed JSON is 400 bad_request', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/typing', {
      key: bot.keys.secret_key,
      rawBody: '{"session_id": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON', code: 'bad_request' });
  });

  it('a missing required field is 400 bad_request naming the field', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/messages', { key: bot.keys.secret_key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.error).toContain('session_id');
  });
});

describe('key authentication', () => {
  it('no X-Bot-Key is 401 missing_key', async () => {
    const res = await http('/v1/api/messages?session_id=s1');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('missing_key');
  });

  it('an unknown key is 401 invalid_key', async () => {
    const res = await http('/v1/api/messages?session_id=s1', { key: 'sk_doesnotexist0000000000000000000' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_key');
  });

  it('a pk_ key is 403 wrong_key_type, and so is a builder key', async () => {
    const bot = await newBot();
    for (const key of [bot.keys.public_key, bot.keys.builder_key]) {
      const res = await http('/v1/api/messages?session_id=s1', { key });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('wrong_key_type');
    }
  });

  it('an unknown pk_ key is 401 invalid_key, not 403', async () => {
    const res = await http('/v1/api/messages?session_id=s1', { key: 'pk_doesnotexist0000000000000000000' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_key');
  });

  it('the sk_ key passes', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/messages?session_id=s1', { key: bot.keys.secret_key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ messages: [], operator_typing: false });
  });
});

describe('body limits', () => {
  it('accepts a body of exactly 1 MiB and refuses one byte more with 413 payload_too_large', async () => {
    const bot = await newBot();
    const frame = (size: number) => {
      const head = '{"session_id":"nope","pad":"';
      const tail = '"}';
      return head + 'a'.repeat(size - head.length - tail.length) + tail;
    };
    const atLimit = await http('/v1/api/typing', {
      key: bot.keys.secret_key,
      rawBody: frame(1024 * 1024),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(atLimit.status).toBe(404); // read, parsed and validated: the session does not exist
    const over = await http('/v1/api/typing', {
      key: bot.keys.secret_key,
      rawBody: frame(1024 * 1024 + 1),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('payload_too_large');
  });
});

describe('the contract document', () => {
  it('GET /v1/openapi.json is OpenAPI 3.1 with info.version 1.3.0', async () => {
    const res = await http('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.3.0');
    const poll = res.body.paths['/v1/api/messages'].get;
    expect(poll.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'session_id', in: 'query', required: true })]),
    );
    expect(poll.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PollResponse',
    });
    expect(poll.responses['401'].description).toContain('missing_key');
    expect(res.body.components.schemas.Error.required).toEqual(['error', 'code']);
  });

  it('documents every public endpoint with its request and response schemas', async () => {
    const { body: doc } = await http('/v1/openapi.json');
    const expected: [string, string][] = [
      ['post', '/v1/api/chat'],
      ['post', '/v1/api/chat/stream'],
      ['post', '/v1/api/handoff'],
      ['get', '/v1/api/messages'],
      ['post', '/v1/api/typing'],
      ['post', '/v1/api/visitors/erase'],
      ['post', '/v1/api/knowledge'],
      ['get', '/v1/api/knowledge'],
      ['get', '/v1/api/knowledge/{id}'],
      ['delete', '/v1/api/knowledge/{id}'],
      ['post', '/v1/admin/sources'],
      ['post', '/v1/admin/scrape'],
      ['get', '/v1/api/operator/threads'],
      ['get', '/v1/api/operator/threads/{sid}'],
      ['post', '/v1/api/operator/threads/{sid}/reply'],
      ['post', '/v1/api/operator/threads/{sid}/typing'],
      ['post', '/v1/api/operator/threads/{sid}/resolve'],
      ['post', '/v1/hooks/{tid}'],
    ];
    for (const [method, path] of expected) {
      const op = doc.paths[path]?.[method];
      expect([method, path, Boolean(op)]).toEqual([method, path, true]);
      const ok = op.responses['200'] ?? op.responses['202'];
      expect([path, Boolean(ok?.content)]).toEqual([path, true]);
      if (method === 'post' && !path.endsWith('/typing') && !path.endsWith('/resolve'))
        expect([path, Boolean(op.requestBody)]).toEqual([path, true]);
      expect(op['x-stability']).toBeUndefined();
    }
    // The dashboard surface is documented too, marked as not part of the stable contract.
    expect(doc.paths['/v1/dashboard/bots/{id}/triggers'].post['x-stability']).toBe('unstable');
  });

  it('GET /docs renders the reference with assets served by the API itself', async () => {
    const res = await http('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).toContain('/v1/api/messages');
    const assetUrls = [...res.text.matchAll(/(?:href|src)="([^"]+\.(?:css|js))"/g)].map((m) => m[1]);
    expect(assetUrls.length).toBeGreaterThanOrEqual(2);
    for (const url of assetUrls) {
      expect(url.startsWith('/')).toBe(true); // no CDN
      const asset = await http(url);
      expect(asset.status).toBe(200);
      expect(asset.text.length).toBeGreaterThan(50);
    }
  });

  it('GET /docs and its assets carry the dashboard pages’ security headers', async () => {
    const [docs, dashboardPage] = await Promise.all([http('/docs'), http('/signin')]);
    for (const name of ['x-frame-options', 'referrer-policy', 'x-content-type-options']) {
      expect([name, docs.headers.get(name)]).toEqual([name, dashboardPage.headers.get(name)]);
    }
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    expect(docs.headers.get('x-frame-options')).toBe('DENY');
    const csp = docs.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    // Scripts only from the API, never inline: the same rule as the pages.
    expect(csp).toMatch(/(?:^|; )script-src 'self'(?:;|$)/);
    for (const name of ['docs.css', 'docs.js', 'scalar.js']) {
      const asset = await http(`/docs/assets/${name}`);
      expect([name, asset.status, asset.headers.get('x-content-type-options')]).toEqual([name, 200, 'nosniff']);
    }
  });
});
