/**
 * Drives the fake OpenAI server with the real `openai` client, so the fake is checked against the same parser, stream
 * decoder and error mapping the platform's worker uses.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';

import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';

let fake: FakeOpenAI;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // maxRetries: 0 so failure directives surface immediately instead of being retried by the client.
  client = new OpenAI({ apiKey: 'test', baseURL: fake.url, maxRetries: 0 });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

/** Resolves with the rejection reason; `any` because we assert on the openai error's fields, not its class. */
async function failure(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const contentOf = (chunks: ChatCompletionChunk[]): string =>
  chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');

/** Reassembles streamed tool calls the way a client must: by index, id/name first, then argument fragments. */
function toolCallsOf(chunks: ChatCompletionChunk[]) {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const d of chunk.choices[0]?.delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: '', name: '', arguments: '' };
      if (d.id) calls[d.index].id = d.id;
      if (d.function?.name) calls[d.index].name += d.function.name;
      if (d.function?.arguments) calls[d.index].arguments += d.function.arguments;
    }
  }
  return calls;
}

describe('chat completions', () => {
  it('answers deterministically with realistic envelope and usage', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Hello there friend' },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.model).toBe('gpt-4o-mini');
    expect(typeof res.created).toBe('number');
    expect(res.choices[0].message).toMatchObject({ role: 'assistant', content: 'Fake answer: Hello there friend' });
    expect(res.choices[0].finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 5, total_tokens: 11 });

    expect(fake.requests).toHaveLength(1);
    const [rec] = fake.requests;
    expect(rec).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(rec.body.messages[1].content).toBe('Hello there friend');
    expect(rec.headers['content-type']).toContain('application/json');
    expect(rec.headers.authorization).toBeUndefined();
  });

  it('includes every FACT line from any message verbatim', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        {
          role: 'system',
          content: 'Use these passages:\nFACT: The sky is blue.\n  FACT: Water boils at 100 C.\nother',
        },
        { role: 'user', content: 'Tell me things\nFACT: Cats purr.' },
      ],
    });
    const content = res.choices[0].message.content ?? '';
    expect(content.startsWith('Fake answer: Tell me things')).toBe(true);
    for (const fact of ['FACT: The sky is blue.', 'FACT: Water boils at 100 C.', 'FACT: Cats purr.']) {
      expect(content).toContain(fact);
    }
    expect(content).not.toContain('other');
  });

  it('cite: each FACT line is followed by the number of the passage it came from', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        {
          role: 'system',
          content:
            'Knowledge passages:\n[1] Sky: Seen from below.\nFACT: The sky is blue.\n\n[2] Water: Boiling.\nFACT: Water boils at 100 C.',
        },
        { role: 'user', content: '[[fake:cite]] Tell me things' },
      ],
    });
    expect(res.choices[0].message.content).toBe(
      'Fake answer: Tell me things\nFACT: The sky is blue. [1]\nFACT: Water boils at 100 C. [2]',
    );
  });

  it('streams the same answer in several chat.completion.chunk deltas, with a usage chunk', async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'one two three four five six seven eight nine ten\nFACT: streaming works' },
    ];
    const plain = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);

    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const contentChunks = chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(contentChunks.length).toBeGreaterThan(3);
    expect(contentOf(chunks)).toBe(plain.choices[0].message.content);

    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0].finish_reason).toBe('stop');
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(plain.usage);
  });

  it('speaks raw SSE: text/event-stream, data: lines, final [DONE]', async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    // No usage field at all unless include_usage was asked for.
    expect(JSON.parse(events[0].slice(6))).not.toHaveProperty('usage');
  });

  it('echo returns the last user message without the marker', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'repeat [[fake:echo]]after me' }] },
      ],
    });
    expect(res.choices[0].message.content).toBe('repeat after me');
    expect(fake.requests[0].directives).toEqual(['echo']);
  });

  it('takes the directive from a fake-* model name, and treats other fake-* names as plain models', async () => {
    const echoed = await client.chat.completions.create({
      model: 'fake-echo',
      messages: [{ role: 'user', content: 'say this' }],
    });
    expect(echoed.choices[0].message.content).toBe('say this');
    const plain = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'say this' }],
    });
    expect(plain.choices[0].message.content).toBe('Fake answer: say this');
  });

  it('rejects unknown marker directives loudly', async () => {
    const err = await failure(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '[[fake:nope]]' }] }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('fake_unknown_directive');
  });

  it('truncates to max_completion_tokens words with finish_reason length', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      max_completion_tokens: 3,
      messages: [{ role: 'user', content: 'a b c d e f' }],
    });
    expect(res.choices[0].message.content).toBe('Fake answer: a');
    expect(res.choices[0].finish_reason).toBe('length');
  });
});

describe('a paced model, long answers and continuations', () => {
  it('pace-<first>-<total>-<n> streams n-character pieces, the first after <first> ms and the last near <total>', async () => {
    const started = Date.now();
    const arrivals: { at: number; text: string }[] = [];
    const stream = await client.chat.completions.create({
      model: 'fake-pace-150-450-4',
      messages: [{ role: 'user', content: 'pace me' }],
      stream: true,
    });
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta?.content;
      if (text) arrivals.push({ at: Date.now() - started, text });
    }
    expect(arrivals.map((a) => a.text).join('')).toBe('Fake answer: pace me');
    expect(arrivals.every((a) => a.text.length <= 4)).toBe(true);
    expect(arrivals[0].at).toBeGreaterThanOrEqual(140);
    expect(arrivals.at(-1)!.at).toBeGreaterThanOrEqual(440);
  });

  it('length-<n> pads the answer to n characters, differently for different questions', async () => {
    const ask = async (q: string) =>
      (
        await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `[[fake:length-200]]${q}` }],
        })
      ).choices[0].message.content!;
    const a = await ask('first question');
    const b = await ask('second question');
    expect(a).toHaveLength(200);
    expect(a.startsWith('Fake answer: first question ')).toBe(true);
    expect(a.slice(40)).not.toBe(b.slice(41));
    expect(await ask('first question')).toBe(a);
  });

  it('continues a cut-off answer: only the rest after the assistant text it was given', async () => {
    const question: ChatCompletionMessageParam = { role: 'user', content: '[[fake:length-120]]what is the warranty' };
    const whole = (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [question] })).choices[0]
      .message.content!;
    const rest = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        question,
        { role: 'assistant', content: whole.slice(0, 50) },
        { role: 'user', content: 'Your answer above was cut off. Continue it from exactly where it stops.' },
      ],
    });
    expect(rest.choices[0].message.content).toBe(whole.slice(50));
  });
});

describe('tool calls', () => {
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    },
  ];
  const question = 'Weather in Paris? [[fake:tool-call:get_weather:{"city":"Paris","tags":[["a"]]}]]';

  it('round trip without streaming', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
    const choice = first.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', tags: [['a']] });

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' });
    const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.tool_calls).toBeUndefined();
    expect(second.choices[0].message.content).toBe(
      'Fake answer: Weather in Paris?\nTool get_weather returned: Sunny, 21 C',
    );
  });

  it('round trip with streaming', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
    const chunks = await collect(
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools, stream: true }),
    );
    const calls = toolCallsOf(chunks);
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('get_weather');
    expect(calls[0].id).toMatch(/^call_/);
    expect(JSON.parse(calls[0].arguments)).toEqual({ city: 'Paris', tags: [['a']] });
    // Arguments arrive in several fragments, and the name only in the first tool-call delta.
    const toolDeltas = chunks.filter((c) => c.choices[0]?.delta?.tool_calls);
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.slice(1).every((c) => c.choices[0].delta.tool_calls?.[0].function?.name === undefined)).toBe(
      true,
    );
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');

    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: calls[0].id, type: 'function', function: { name: calls[0].name, arguments: calls[0].arguments } },
        ],
      },
      { role: 'tool', tool_call_id: calls[0].id, content: 'Rainy, 12 C' },
    );
    const answer = await collect(
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools, stream: true }),
    );
    expect(contentOf(answer)).toContain('Tool get_weather returned: Rainy, 12 C');
    expect(toolCallsOf(answer)).toEqual([]);
  });
});

describe('failure directives surface as openai errors', () => {
  const cases: [string, number, string | null][] = [
    ['fail-401', 401, 'invalid_api_key'],
    ['insufficient-quota', 429, 'insufficient_quota'],
    ['fail-402', 402, 'insufficient_quota'],
    ['fail-429', 429, 'rate_limit_exceeded'],
    ['fail-500', 500, null],
    ['fail-503', 503, null],
  ];

  it.each(cases)('%s via marker', async (directive, status, code) => {
    const err = await failure(
      client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: `hi [[fake:${directive}]]` }],
      }),
    );
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.requestID).toMatch(/^req_/);
  });

  it.each(cases)('%s via model name, streaming', async (directive, status, code) => {
    const err = await failure(
      client.chat.completions.create({
        model: `fake-${directive}`,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
  });

  it('fail-401 sends the exact OpenAI body', async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-1234567890abcd', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-fail-401', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as any;
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toEqual({
      message: expect.stringMatching(/^Incorrect API key provided: sk-\*+abcd\. You can find your API key at /),
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
  });

  it('fail-429 carries retry-after: 2', async () => {
    const err = await failure(
      client.chat.completions.create({ model: 'fake-fail-429', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(err.headers.get('retry-after')).toBe('2');
    expect(err.type).toBe('requests');
  });

  it('insufficient-quota has type insufficient_quota', async () => {
    const err = await failure(
      client.chat.completions.create({ model: 'fake-insufficient-quota', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(err.type).toBe('insufficient_quota');
  });

  it('a missing API key is a 401 like OpenAI', async () => {
    const res = await fetch(`${fake.url}/models`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.type).toBe('invalid_request_error');
  });

  it('stream-then-fail delivers a few deltas, then the stream breaks', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five six seven [[fake:stream-then-fail]]' }],
    });
    const received: string[] = [];
    const err = await failure(
      (async () => {
        for await (const chunk of stream) received.push(chunk.choices[0]?.delta?.content ?? '');
      })(),
    );
    expect(err).toBeDefined();
    expect(received.join('')).toBe('Fake answer: one two three four ');
    expect(received.filter(Boolean)).toHaveLength(2);
  });

  it('stream-then-fail without streaming is a connection error', async () => {
    const err = await failure(
      client.chat.completions.create({ model: 'fake-stream-then-fail', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/connection error/i);
  });
});

describe('slow', () => {
  it('delays the answer', async () => {
    const started = Date.now();
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'wait [[fake:slow-300]]' }],
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.choices[0].message.content).toBe('Fake answer: wait');
  });

  it('trips a client timeout, and combines with other directives', async () => {
    const impatient = new OpenAI({ apiKey: 'test', baseURL: fake.url, maxRetries: 0, timeout: 200 });
    const started = Date.now();
    const err = await failure(
      impatient.chat.completions.create({
        model: 'fake-echo',
        messages: [{ role: 'user', content: 'late [[fake:slow-5000]]' }],
      }),
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.status).toBeUndefined();
    // Outside jest this is "Request timed out."; inside jest the client's abort-error check trips over the sandbox's
    // separate Error realm and reports a generic connection error. Either way: no status, no response.
    expect(err.message).toMatch(/timed out|connection error/i);
    // The server is still healthy after the client hung up mid-delay.
    const ok = await client.chat.completions.create({
      model: 'fake-echo',
      messages: [{ role: 'user', content: 'ok' }],
    });
    expect(ok.choices[0].message.content).toBe('ok');
  });
});

describe('embeddings', () => {
  const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

  it('returns deterministic normalised 64-dim vectors where similar texts are close', async () => {
    const texts = ['the cat sat on the mat', 'the cat sat on a mat', 'quarterly revenue grew strongly'];
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts });
    expect(res.object).toBe('list');
    expect(res.model).toBe('text-embedding-3-small');
    expect(res.data.map((d) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
      ['embedding', 2],
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 16, total_tokens: 16 });
    const [a, b, c] = res.data.map((d) => d.embedding);
    expect(a).toHaveLength(64);
    expect(cosine(a, a)).toBeCloseTo(1, 5);
    expect(cosine(a, b)).toBeGreaterThan(0.7);
    expect(cosine(a, c)).toBeLessThan(cosine(a, b));
    // The client's default base64 path decodes to exactly the helper's float32 values.
    expect(a).toEqual(fakeEmbedding(texts[0]));

    const again = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts[0] });
    expect(again.data[0].embedding).toEqual(a);
  });

  it('honours dimensions and encoding_format float', async () => {
    const res = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'hello world',
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(res.data[0].embedding).toHaveLength(16);
    expect(res.data[0].embedding).toEqual(fakeEmbedding('hello world', 16));
  });

  it('honours failure directives', async () => {
    const err = await failure(client.embeddings.create({ model: 'fake-fail-503', input: 'x' }));
    expect(err.status).toBe(503);
    const err2 = await failure(
      client.embeddings.create({ model: 'text-embedding-3-small', input: ['a [[fake:fail-429]]'] }),
    );
    expect(err2.status).toBe(429);
    expect(err2.code).toBe('rate_limit_exceeded');
  });
});

describe('models', () => {
  it('lists models', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o-mini', 'text-embedding-3-small']));
    expect((await client.models.retrieve('anything')).id).toBe('anything');
  });
});

describe('scripts', () => {
  it('consumes scripted steps in order, the last one repeating', async () => {
    fake.script('s1', [
      {
        toolCalls: [
          { name: 'search', arguments: '{"q":"x"}' },
          { name: 'lookup', arguments: '{}' },
        ],
      },
      { status: 429, errorCode: 'rate_limit_exceeded' },
      { text: 'scripted reply', delayMs: 50 },
    ]);
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'go [[fake:script:s1]]' }];
    const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const askStream = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });

    const first = await ask();
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.tool_calls?.map((c) => (c.type === 'function' ? c.function.name : ''))).toEqual([
      'search',
      'lookup',
    ]);
    const err = await failure(ask());
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect((await ask()).choices[0].message.content).toBe('scripted reply');
    expect(contentOf(await collect(await askStream()))).toBe('scripted reply');

    expect(fake.requests.filter((r) => r.tags.includes('s1'))).toHaveLength(4);
  });

  it('streams scripted tool calls with one index per call', async () => {
    fake.script('s2', [
      {
        toolCalls: [
          { name: 'a', arguments: '{"n":1}' },
          { name: 'b', arguments: '{"n":2}' },
        ],
      },
    ]);
    const chunks = await collect(
      await client.chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: '[[fake:script:s2]]' }],
      }),
    );
    expect(toolCallsOf(chunks).map(({ name, arguments: args }) => [name, args])).toEqual([
      ['a', '{"n":1}'],
      ['b', '{"n":2}'],
    ]);
  });

  it('unscripted tags fail with a clear 400', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: '[[fake:script:none]]' }],
      }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('fake_script_missing');
  });

  it('can be scripted and inspected over HTTP control endpoints', async () => {
    const base = fake.url.replace(/\/v1$/, '');
    const post = await fetch(`${base}/_control/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tag: 'remote', steps: [{ text: 'from another process' }, { status: 500 }] }),
    });
    expect(post.status).toBe(200);

    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'q [[fake:script:remote]]' }];
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(res.choices[0].message.content).toBe('from another process');
    const err = await failure(client.chat.completions.create({ model: 'gpt-4o-mini', messages }));
    expect(err.status).toBe(500);
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'unrelated' }] });
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'labelled [[fake:tag:remote]]' }],
    });

    const listed = (await (await fetch(`${base}/_control/requests?tag=remote`)).json()) as any;
    expect(listed.requests).toHaveLength(3);
    expect(listed.requests[0].body.messages[0].content).toBe('q [[fake:script:remote]]');
    expect(listed.requests[0].headers.authorization).toBeUndefined();
    const all = (await (await fetch(`${base}/_control/requests`)).json()) as any;
    expect(all.requests).toHaveLength(4);

    expect((await fetch(`${base}/_control/reset`, { method: 'POST' })).status).toBe(200);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('standalone process', () => {
  const file = path.join(__dirname, '..', 'support', 'fake-openai.ts');

  it('prints usage with --help', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: /);
  });

  it('starts on the given port and prints its URL as one JSON line', async () => {
    // Reserve a free port by briefly starting (and stopping) an in-process instance.
    const probe = await startFakeOpenAI();
    const port = probe.port;
    await probe.close();

    const child = spawn(process.execPath, ['--import', 'tsx', file, '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('\n')) resolve(buf.slice(0, buf.indexOf('\n')));
        });
        child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      const { url } = JSON.parse(line);
      expect(url).toBe(`http://127.0.0.1:${port}/v1`);
      const remote = new OpenAI({ apiKey: 'test', baseURL: url, maxRetries: 0 });
      const res = await remote.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'ping' }],
      });
      expect(res.choices[0].message.content).toBe('Fake answer: ping');
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
