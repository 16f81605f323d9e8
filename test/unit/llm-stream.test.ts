/**
 * The worker reads a model's stream itself (lib/sse-decoder.ts, lib/llm.ts): the decoder against the event stream
 * format, and the streamed `complete` against the fake OpenAI server and hand-written streams on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IncomingMessage, type RequestListener, createServer, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readText } from '../../lib/http/model-fetch';
import { LlmError, createOpenAiLlm } from '../../lib/llm';
import { TEST_CERT, TEST_KEY, TEST_TLS_NAME } from '../support/tls-cert';
import { SseDecoder, type ServerSentEvent } from '../../lib/sse-decoder';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';

/** One event of a model's stream: a `chat.completion.chunk` carrying `content` (and the model's name, if given). */
const completionChunk = (content: string, model?: string) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    ...(model ? { model } : {}),
    choices: [{ index: 0, delta: { content } }],
  });

describe('the event stream decoder', () => {
  const sample =
    ': a comment\r\n' +
    'data: {"a":1}\r\n\r\n' +
    'event: error\ndata: first line\ndata:second line\n\n' +
    'data\n\n' +
    'id: 7\rretry: 10\rdata: cr only\r\r' +
    'data: [DONE]\n\n' +
    'data: never closed';
  const expected: ServerSentEvent[] = [
    { event: null, data: '{"a":1}' },
    { event: 'error', data: 'first line\nsecond line' },
    { event: null, data: '' },
    { event: null, data: 'cr only' },
    { event: null, data: '[DONE]' },
  ];

  it('reads every event of a stream in one piece', () => {
    const d = new SseDecoder();
    expect(d.push(sample)).toEqual(expected);
    d.end();
  });

  it('reads the same events however the network cuts the stream, even between CR and LF', () => {
    for (let cut = 0; cut <= sample.length; cut++) {
      const d = new SseDecoder();
      const events = [...d.push(sample.slice(0, cut)), ...d.push(sample.slice(cut))];
      expect(events).toEqual(expected);
    }
    const d = new SseDecoder();
    const oneByOne = [...sample].flatMap((c) => d.push(c));
    expect(oneByOne).toEqual(expected);
  });

  it('drops an event the body ended before closing', () => {
    const d = new SseDecoder();
    expect(d.push('data: half')).toEqual([]);
    d.end();
    expect(d.push('\n\n')).toEqual([]);
  });
});

describe('a streamed completion', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(() => fake.close());

  const llm = () => createOpenAiLlm({ apiKey: 'test', baseURL: fake.url, model: 'gpt-test' });

  it('hands on the text as it comes, in pieces that add up to the answer the JSON call gives', async () => {
    const question = { role: 'user' as const, content: '[[fake:pace-50-400-4]] what are the opening hours?' };
    const pieces: string[] = [];
    const streamed = await llm().complete({
      messages: [question],
      timeoutMs: 5000,
      onDelta: (d) => void pieces.push(d),
    });
    const whole = await llm().complete({ messages: [question], timeoutMs: 5000 });
    expect(streamed.text).toBe(whole.text);
    expect(streamed.text).toContain('Fake answer: what are the opening hours?');
    expect(pieces.join('')).toBe(streamed.text);
    // Paced over 350 ms: several network reads, each handed on as one piece.
    expect(pieces.length).toBeGreaterThan(2);
    expect(streamed.promptTokens).toBeGreaterThan(0);
    expect(streamed.completionTokens).toBeGreaterThan(0);
    expect(streamed.model).toBe('gpt-test');
  });

  it('gathers a tool call sent in parts', async () => {
    const res = await llm().complete({
      messages: [{ role: 'user', content: '[[fake:tool-call:lookup_order:{"order":"A-17"}]] where is my order?' }],
      tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'object' } } }],
      timeoutMs: 5000,
      onDelta: () => undefined,
    });
    expect(res.toolCalls).toEqual([{ id: expect.any(String), name: 'lookup_order', arguments: '{"order":"A-17"}' }]);
  });

  it('fails as the model failed: a refused request, and a stream cut off midway', async () => {
    await expect(
      llm().complete({
        messages: [{ role: 'user', content: '[[fake:fail-429]] hi' }],
        timeoutMs: 5000,
        onDelta: () => undefined,
      }),
    ).rejects.toMatchObject({ kind: 'llm_overloaded' });
    const pieces: string[] = [];
    await expect(
      llm().complete({
        messages: [{ role: 'user', content: '[[fake:stream-then-fail]] hi' }],
        timeoutMs: 5000,
        onDelta: (d) => void pieces.push(d),
      }),
    ).rejects.toThrow();
    expect(pieces.join('').length).toBeGreaterThan(0);
  });

  it("reads a refused request's reason from its body, and gives up on a model that does not answer in time", async () => {
    const refused = await llm()
      .complete({ messages: [{ role: 'user', content: '[[fake:no-such-directive]] hi' }], timeoutMs: 5000 })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'llm_unavailable' });
    expect((refused as LlmError).message).toMatch(/rejected the request: .*no-such-directive/);
    const started = Date.now();
    const late = await llm()
      .complete({
        messages: [{ role: 'user', content: '[[fake:slow-3000]] hi' }],
        timeoutMs: 300,
        onDelta: () => undefined,
      })
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ kind: 'llm_overloaded' });
    expect((late as LlmError).message).toBe('The AI backend did not answer in time');
    expect(Date.now() - started).toBeLessThan(2500);
  });
});

describe('a stream written by hand', () => {
  let server: Server;
  let body: string[] = [];
  let connections = 0;
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const part of body) {
        res.write(part);
        await new Promise((r) => setTimeout(r, 5));
      }
      res.end();
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const llm = () =>
    createOpenAiLlm({
      apiKey: 'test',
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      model: 'gpt-test',
    });
  const chunk = (content: string) => completionChunk(content, 'gpt-hand');

  it('reads events cut anywhere, with CRLF line ends, and ignores what follows [DONE]', async () => {
    const stream = `data: ${chunk('Hel')}\r\n\r\ndata: ${chunk('lo')}\r\n\r\ndata: [DONE]\r\n\r\ndata: ${chunk('!')}\r\n\r\n`;
    body = [stream.slice(0, 7), stream.slice(7, 40), stream.slice(40, 41), stream.slice(41)];
    const pieces: string[] = [];
    const res = await llm().complete({
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 5000,
      onDelta: (d) => void pieces.push(d),
    });
    expect(res.text).toBe('Hello');
    expect(pieces.join('')).toBe('Hello');
    expect(res.model).toBe('gpt-hand');
  });

  it('reports an error sent inside the stream as the backend failing', async () => {
    body = [
      `data: ${chunk('Hi')}\n\n`,
      `data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n`,
    ];
    const err = await llm()
      .complete({ messages: [{ role: 'user', content: 'hi' }], timeoutMs: 5000, onDelta: () => undefined })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).kind).toBe('llm_overloaded');
  });

  it('keeps the connection to the model for the next answer', async () => {
    body = [`data: ${chunk('One')}\n\n`, 'data: [DONE]\n\n'];
    const model = llm();
    const before = connections;
    for (let i = 0; i < 3; i++) {
      const res = await model.complete({
        messages: [{ role: 'user', content: 'hi' }],
        timeoutMs: 5000,
        onDelta: () => undefined,
      });
      expect(res.text).toBe('One');
    }
    expect(connections - before).toBe(1);
  });
});

describe('kept-alive connections to the model', () => {
  const chunk = completionChunk('Hi');
  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${chunk}\n\ndata: [DONE]\n\n`);
  };
  /** A model server on loopback; `handle` answers or not, told which request on its connection this is (1, 2…). */
  async function modelServer(handle: (res: ServerResponse, nthOnConnection: number) => void) {
    const seen = new WeakMap<object, number>();
    let requests = 0;
    let connections = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      const n = (seen.get(req.socket) ?? 0) + 1;
      seen.set(req.socket, n);
      handle(res, n);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      server,
      counts: () => ({ requests, connections }),
      llm: () =>
        createOpenAiLlm({
          apiKey: 'test',
          baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
          model: 'gpt-test',
        }),
      close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
    };
  }
  const ask = (llm: ReturnType<typeof createOpenAiLlm>) =>
    llm.complete({ messages: [{ role: 'user', content: 'hi' }], timeoutMs: 5000, onDelta: () => undefined });

  it('sends a request again on a new connection when the kept-alive one was closed as it went out', async () => {
    // The server drops its connection when the next request arrives on it, as a server closing an idle connection
    // does when the request crosses its close: the request was never read.
    const model = await modelServer((res, n) => (n === 1 ? answer(res) : res.socket?.destroy()));
    try {
      const llm = model.llm();
      expect((await ask(llm)).text).toBe('Hi');
      expect((await ask(llm)).text).toBe('Hi');
      expect(model.counts()).toEqual({ requests: 3, connections: 2 });
    } finally {
      await model.close();
    }
  });

  it('sends it again on a connection of its own, not on another kept-alive one the server is closing too', async () => {
    // Two connections kept alive, both closed by the server as the next request arrives on either of them.
    const model = await modelServer((res, n) => (n === 1 ? answer(res) : res.socket?.destroy()));
    try {
      const llm = model.llm();
      const first = await Promise.all([ask(llm), ask(llm)]);
      expect(first.map((r) => r.text)).toEqual(['Hi', 'Hi']);
      expect(model.counts()).toEqual({ requests: 2, connections: 2 });
      expect((await ask(llm)).text).toBe('Hi');
      // The request on a kept-alive connection (dropped), then on a new one (answered): the other idle one untried.
      expect(model.counts()).toEqual({ requests: 4, connections: 3 });
    } finally {
      await model.close();
    }
  });

  it('does not send again a request that failed on a new connection (the model may have begun on it)', async () => {
    const model = await modelServer((res) => res.socket?.destroy());
    try {
      const err = await ask(model.llm()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect((err as LlmError).kind).toBe('llm_overloaded');
      // The network's reason is kept for the run's record and the Temporal UI.
      expect((err as LlmError).message).toBe('The AI backend could not be reached (ECONNRESET)');
      expect(model.counts()).toEqual({ requests: 1, connections: 1 });
    } finally {
      await model.close();
    }
  });

  it('closes an unused connection before the time the server announced it would close it', async () => {
    const model = await modelServer(answer);
    model.server.keepAliveTimeout = 2_500; // announced as `Keep-Alive: timeout=2`: the client closes after 1 s
    const closedByClient = new Promise<number>((resolve) =>
      model.server.once('connection', (socket) => socket.once('end', () => resolve(Date.now()))),
    );
    try {
      expect((await ask(model.llm())).text).toBe('Hi');
      const answeredAt = Date.now();
      const serverWouldHaveClosed = new Promise<number>((r) => setTimeout(() => r(Infinity), 3_000).unref());
      expect((await Promise.race([closedByClient, serverWouldHaveClosed])) - answeredAt).toBeLessThan(2_000);
    } finally {
      await model.close();
    }
  });
});

describe('a paced stream read with rests', () => {
  // A model that sends its first piece, then 60 more 5 ms apart: a token at a time, as models stream.
  const piece = (content: string) => `data: ${completionChunk(content)}\n\n`;
  const words = Array.from({ length: 61 }, (_, i) => `w${i} `);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const paced: RequestListener = (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(piece(words[0]));
    void (async () => {
      await sleep(50);
      for (const word of words.slice(1)) {
        if (res.destroyed) return;
        res.write(piece(word));
        await sleep(5);
      }
      res.end('data: [DONE]\n\n');
    })();
  };
  let server: Server;
  let tlsServer: https.Server;
  let connections = 0;
  beforeAll(async () => {
    server = createServer(paced);
    server.on('connection', () => connections++);
    tlsServer = https.createServer({ key: TEST_KEY, cert: TEST_CERT }, paced);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of [server, tlsServer]) await new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())));
  });

  const llm = (readRestMs: number) =>
    createOpenAiLlm({
      apiKey: 'test',
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      model: 'gpt-test',
      readRestMs,
    });
  const stream = async (model: ReturnType<typeof llm>) => {
    const pieces: string[] = [];
    const res = await model.complete({
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 5000,
      onDelta: (d) => void pieces.push(d),
    });
    return { text: res.text, pieces };
  };
  const whole = words.map(piece).join('') + 'data: [DONE]\n\n';

  it('hands on the first piece at once, then what the model sent while the connection rested, in one piece', async () => {
    const resting = await stream(llm(100));
    expect(resting.text).toBe(words.join(''));
    expect(resting.pieces.join('')).toBe(words.join(''));
    expect(resting.pieces[0]).toBe(words[0]);
    // 300 ms of pieces read at most every 100 ms: a handful of reads instead of one per piece.
    expect(resting.pieces.length).toBeLessThanOrEqual(12);
    const eager = await stream(llm(0));
    expect(eager.text).toBe(words.join(''));
    expect(eager.pieces.length).toBeGreaterThanOrEqual(25);
  });

  it('leaves the connection reading for the next answer on it', async () => {
    const model = llm(100);
    const before = connections;
    for (let i = 0; i < 3; i++) expect((await stream(model)).text).toBe(words.join(''));
    expect(connections - before).toBe(1);
  });

  it('rests a TLS connection too, and it serves the next answer', async () => {
    const agent = new https.Agent({ keepAlive: true, ca: TEST_CERT, servername: TEST_TLS_NAME });
    const port = (tlsServer.address() as AddressInfo).port;
    let secured = 0;
    tlsServer.on('secureConnection', () => secured++);
    try {
      for (let i = 0; i < 2; i++) {
        const res = await new Promise<IncomingMessage>((resolve, reject) =>
          https.get({ host: '127.0.0.1', port, agent }, resolve).on('error', reject),
        );
        const reads: string[] = [];
        await readText(res, (text, rest) => {
          reads.push(text);
          rest(100);
        });
        expect(reads.join('')).toBe(whole);
        expect(reads[0]).toBe(piece(words[0]));
        expect(reads.length).toBeLessThanOrEqual(12);
      }
      expect(secured).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('gives up on an answer still streaming when the budget ends, its connection resting or not', async () => {
    // The client's own timeout ends when the answer's headers come: the body's 350 ms go past a 200 ms budget.
    for (const readRestMs of [0, 1_000]) {
      const started = Date.now();
      const err = await llm(readRestMs)
        .complete({ messages: [{ role: 'user', content: 'hi' }], timeoutMs: 200, onDelta: () => undefined })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LlmError);
      expect(err).toMatchObject({ kind: 'llm_overloaded', message: 'The AI backend did not answer in time' });
      expect(Date.now() - started).toBeLessThan(900); // a rest of 1 000 ms would have delayed it past
    }
  });
});
