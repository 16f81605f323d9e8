/**
 * Fake OpenAI: a real HTTP server on loopback speaking the OpenAI Chat Completions / Embeddings / Models protocol.
 * The platform's worker talks to it through the real `openai` client (baseURL = fake.url), so integration tests cover
 * the actual wire format, streaming parser and error mapping without network access or API keys.
 *
 * In-process:   const fake = await startFakeOpenAI();  // fake.url === 'http://127.0.0.1:<port>/v1'
 * As a process: node --import tsx test/support/fake-openai.ts --port 0
 *               prints one JSON line {"url":"http://127.0.0.1:<port>/v1","port":<port>} on stdout; SIGTERM stops it.
 *
 * Endpoints
 *   POST /v1/chat/completions   JSON, or SSE when `stream: true` (usage chunk when stream_options.include_usage)
 *   POST /v1/embeddings         deterministic hashed bag-of-words vectors, 64 dims unless `dimensions` is given
 *   GET  /v1/models, GET /v1/models/:id
 *   POST /_control/script       {tag, steps}: same as fake.script(tag, steps), for tests in other processes
 *   GET  /_control/requests     ?tag=T filters to requests carrying [[fake:script:T]] or [[fake:tag:T]]; a chat
 *                               completion's record holds the `usage` it was answered with
 *   POST /_control/reset        same as fake.reset()
 *   /v1 endpoints require an Authorization header (like OpenAI); it is never recorded.
 *
 * Default answer (no behaviour directive):
 *   "Fake answer: " + text of the last user message (markers removed, trimmed)
 *   + for every distinct line, in any message of any role, that starts with "FACT:" (leading blanks ignored):
 *     "\n" + that line verbatim (trimmed), in order of first appearance.
 *   Why: tests assert that retrieved knowledge passages really reached the model by looking for their FACT lines.
 *   `max_tokens` / `max_completion_tokens` truncate the answer to that many words with finish_reason "length".
 *   Tokens are counted roughly as whitespace-separated words.
 *
 * Directives select behaviour per request so parallel tests do not interfere. They come from a model name
 * `fake-<directive>` (e.g. model "fake-fail-429"; unknown fake-* models are ordinary models) or from markers
 * `[[fake:<directive>]]` anywhere in any message content (or embeddings input). Markers are stripped from the text
 * the answer is derived from. Several markers combine: delays add up, the first other directive wins, markers before
 * the model name. An unknown marker directive is a 400 (code fake_unknown_directive) so typos fail loudly.
 *   fail-401                   401 invalid_api_key, body exactly as OpenAI sends it
 *   insufficient-quota         429 insufficient_quota (what OpenAI really sends when credit runs out)
 *   fail-402                   402 insufficient_quota (variant for providers that use 402)
 *   fail-429                   429 rate_limit_exceeded with `retry-after: 2`
 *   fail-500, fail-503         server_error / overloaded (code null, as OpenAI does); any other fail-<4xx|5xx> works
 *   slow-<ms>                  wait <ms> before answering (combine with others: [[fake:slow-300]][[fake:echo]])
 *   pace-<first>-<total>[-<n>] a streamed answer paced like a real model: content in pieces of <n> characters
 *                              (default 4), the first <first> ms after the request, the last at <total> ms
 *   length-<chars>             the default answer padded to <chars> characters with words derived from the question
 *                              (so different questions get different answers), like a real model's longer replies
 *   cite                       the default answer cites the passage each FACT line came from, as a model asked to
 *                              cite would: " [n]" after the line, n from the nearest line above it starting "[n] "
 *   stream-then-fail           streaming: role chunk + two content deltas, then the socket is destroyed;
 *                              non-streaming: the socket is destroyed without a response
 *   tool-call:<name>:<json>    first turn: a tool call to <name> with <json> as arguments (default {});
 *                              once the request holds a `tool` message answering that call: the default answer plus
 *                              "\nTool <name> returned: <tool message content>"
 *   malformed                  200 with a body that is not JSON (an unclassifiable failure)
 *   echo                       answer = last user message text (markers removed), nothing else
 *   script:<tag>               next step of the queue set by script(tag, steps) / POST /_control/script; steps are
 *                              consumed in order and the last one repeats; no queue for the tag is a 400
 *   tag:<label>                no behaviour; labels the recorded request for GET /_control/requests?tag=<label>
 * Continuing a cut-off answer: when the last two messages are an assistant message (no tool calls) and a user message
 * starting "Your answer above was cut off", the answer is the rest of what the request before them would have been
 * answered, after the assistant's text (all of it when that text is not its beginning).
 * Embeddings honour fail-*, slow-* and tag: (from the model name or markers in the input) and ignore the rest.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. /v1/chat/completions. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased request headers, without authorization / api-key. */
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (raw text if it was not JSON, null if empty). `any` because tests poke into wire JSON freely. */
  body: any;
  /** Raw directive strings found (model name first, then markers). */
  directives: string[];
  /** Script tags and tag: labels, for filtering. */
  tags: string[];
  receivedAt: number;
  /** The token counts a chat completion was answered with (what the platform charges credits for). */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface Step {
  text?: string;
  toolCalls?: { name: string; arguments: string }[];
  /** >= 400 answers with an OpenAI-style error of that status. */
  status?: number;
  errorCode?: string;
  delayMs?: number;
}

export interface FakeOpenAI {
  /** Base URL ending in /v1, ready for `new OpenAI({ baseURL })`. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
  script(tag: string, steps: Step[]): void;
  reset(): void;
}

type Directive =
  | { kind: 'fail'; status: number; code: string | null }
  | { kind: 'slow'; ms: number }
  | { kind: 'pace'; firstMs: number; totalMs: number; chars: number }
  | { kind: 'length'; chars: number }
  | { kind: 'cite' }
  | { kind: 'stream-then-fail' }
  | { kind: 'malformed' }
  | { kind: 'tool-call'; name: string; args: string }
  | { kind: 'echo' }
  | { kind: 'script'; tag: string }
  | { kind: 'tag'; tag: string }
  | { kind: 'invalid'; message: string };

type Behaviour = Exclude<
  Directive,
  { kind: 'slow' } | { kind: 'pace' } | { kind: 'length' } | { kind: 'cite' } | { kind: 'tag' } | { kind: 'invalid' }
>;

interface Plan {
  delayMs: number;
  pace: { firstMs: number; totalMs: number; chars: number } | null;
  padTo: number;
  /** `cite`: the default answer cites the numbered passage each FACT line came from. */
  cite: boolean;
  behaviour: Behaviour | null;
  invalid: string | null;
  raw: string[];
  tags: string[];
}

interface ChatMessage {
  role?: string;
  content?: unknown;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
}

interface ToolCallOut {
  name: string;
  arguments: string;
}

interface Reply {
  content: string | null;
  toolCalls: ToolCallOut[];
  finishReason?: 'stop' | 'length' | 'tool_calls';
}

const DEFAULT_DIMENSIONS = 64;
const MAX_BODY_BYTES = 20 * 1024 * 1024;
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'text-embedding-3-small', 'text-embedding-3-large'];

const USAGE = `Usage: node --import tsx test/support/fake-openai.ts [--port N]

Starts the fake OpenAI server on 127.0.0.1 (port 0 = any free port, the default) and prints one JSON line
{"url":"http://127.0.0.1:<port>/v1","port":<port>} to stdout. Stops on SIGINT/SIGTERM.
See the header of test/support/fake-openai.ts for endpoints and [[fake:<directive>]] directives.
`;

// ---------------------------------------------------------------------------------------------------------------
// Server

export async function startFakeOpenAI(opts: { port?: number } = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, { steps: Step[]; next: number }>();
  // Aborted on close() so slow requests and pending timers do not keep the process (or jest) alive.
  const lifetime = new AbortController();

  const script = (tag: string, steps: Step[]): void => {
    if (!tag || !Array.isArray(steps) || steps.length === 0)
      throw new Error('script(tag, steps) needs a tag and steps');
    scripts.set(tag, { steps: steps.map((s) => ({ ...s })), next: 0 });
  };
  const takeStep = (tag: string): Step | undefined => {
    const queue = scripts.get(tag);
    if (!queue) return undefined;
    const step = queue.steps[Math.min(queue.next, queue.steps.length - 1)];
    queue.next++;
    return step;
  };
  const reset = (): void => {
    requests.length = 0;
    scripts.clear();
  };

  const server = http.createServer((req, res) => {
    // A client that hangs up mid-stream makes writes fail; that is expected here, not a server error.
    res.on('error', () => undefined);
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, 'server_error', null, `fake-openai internal error: ${String(err)}`);
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method} ${url.pathname.replace(/\/+$/, '')}`;
    const text = await readBody(req);
    let body: any = null;
    let badJson = false;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
        badJson = true;
      }
    }

    if (url.pathname.startsWith('/_control/')) return handleControl(route, url, body, res);

    const plan = planFor(body, url.pathname === '/v1/embeddings' ? 'embeddings' : 'chat');
    const headers = { ...req.headers };
    delete headers.authorization;
    delete headers['api-key'];
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      directives: plan.raw,
      tags: plan.tags,
      receivedAt: Date.now(),
    };
    requests.push(recorded);

    if (!req.headers.authorization) {
      return sendError(
        res,
        401,
        'invalid_request_error',
        null,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer " +
          "auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're " +
          'accessing the API from your browser and are prompted for a username and password. You can obtain an API ' +
          'key from https://platform.openai.com/account/api-keys.',
      );
    }
    if (badJson) {
      return sendError(res, 400, 'invalid_request_error', null, 'We could not parse the JSON body of your request.');
    }

    const signal = requestSignal(res, lifetime.signal);
    if (route === 'POST /v1/chat/completions') return handleChat(req, res, body, plan, signal, recorded);
    if (route === 'POST /v1/embeddings') return handleEmbeddings(req, res, body, plan, signal);
    if (route === 'GET /v1/models') {
      return sendJson(res, 200, { object: 'list', data: MODELS.map(modelObject) });
    }
    const model = /^GET \/v1\/models\/(.+)$/.exec(route);
    if (model) return sendJson(res, 200, modelObject(decodeURIComponent(model[1])));
    return sendError(res, 404, 'invalid_request_error', null, `Invalid URL (${req.method} ${url.pathname})`);
  }

  function handleControl(route: string, url: URL, body: any, res: http.ServerResponse): void {
    if (route === 'POST /_control/script') {
      if (!body || typeof body.tag !== 'string' || !Array.isArray(body.steps) || body.steps.length === 0) {
        return sendJson(res, 400, { error: 'expected {"tag": string, "steps": [Step, ...]}' });
      }
      script(body.tag, body.steps as Step[]);
      return sendJson(res, 200, { ok: true });
    }
    if (route === 'GET /_control/requests') {
      const tag = url.searchParams.get('tag');
      return sendJson(res, 200, { requests: tag ? requests.filter((r) => r.tags.includes(tag)) : requests });
    }
    if (route === 'POST /_control/reset') {
      reset();
      return sendJson(res, 200, { ok: true });
    }
    return sendJson(res, 404, { error: `unknown control route ${route}` });
  }

  const hasModel = (body: any): boolean =>
    !!body && typeof body === 'object' && typeof body.model === 'string' && body.model !== '';

  async function handleChat(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: any,
    plan: Plan,
    signal: AbortSignal,
    recorded: RecordedRequest,
  ): Promise<void> {
    if (!hasModel(body))
      return sendError(res, 400, 'invalid_request_error', null, 'you must provide a model parameter');
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return sendError(
        res,
        400,
        'invalid_request_error',
        'messages',
        "Missing required parameter: 'messages'.",
        'missing_required_parameter',
      );
    }
    if (plan.invalid) return sendError(res, 400, 'invalid_request_error', null, plan.invalid, 'fake_unknown_directive');

    const messages = body.messages as ChatMessage[];
    const behaviour = plan.behaviour;
    let step: Step | undefined;
    if (behaviour?.kind === 'script') {
      step = takeStep(behaviour.tag);
      if (!step) {
        return sendError(
          res,
          400,
          'invalid_request_error',
          null,
          `fake-openai: no script registered for tag "${behaviour.tag}"`,
          'fake_script_missing',
        );
      }
    }

    await sleep(plan.delayMs + (step?.delayMs ?? 0), signal);
    if (signal.aborted) return;

    const stream = body.stream === true;
    let reply: Reply;
    switch (behaviour?.kind) {
      case 'fail':
        return sendFailure(res, behaviour.status, behaviour.code, body, req);
      case 'malformed':
        // A 200 whose body is not JSON: a broken proxy or provider, which no error class of the client describes.
        if (stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.end('data: {"id": "chatcmpl-broken", "choices": [\n\n');
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"id": "chatcmpl-broken", "choices": [');
      case 'stream-then-fail':
        if (!stream) return void res.destroy();
        return streamThenFail(res, body, defaultAnswer(messages));
      case 'echo':
        reply = { content: lastUserText(messages), toolCalls: [] };
        break;
      case 'tool-call': {
        const result = toolResultFor(messages, behaviour.name);
        reply =
          result === undefined
            ? { content: null, toolCalls: [{ name: behaviour.name, arguments: behaviour.args }] }
            : { content: `${defaultAnswer(messages)}\nTool ${behaviour.name} returned: ${result}`, toolCalls: [] };
        break;
      }
      case 'script': {
        const s = step as Step;
        if (s.status !== undefined && s.status >= 400) {
          return sendFailure(res, s.status, s.errorCode ?? defaultCode(s.status), body, req, s.text);
        }
        const toolCalls = s.toolCalls ?? [];
        const content = s.text ?? (toolCalls.length > 0 ? null : defaultAnswer(messages));
        reply = { content, toolCalls };
        break;
      }
      default:
        reply = {
          content: continuedAnswer(messages, plan.padTo, plan.cite) ?? paddedAnswer(messages, plan.padTo, plan.cite),
          toolCalls: [],
        };
    }

    reply = applyMaxTokens(reply, body);
    const usage = usageFor(messages, reply);
    recorded.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
    if (stream) return streamReply(res, body, reply, usage, plan.pace, signal);
    if (plan.pace) await sleep(plan.pace.totalMs, signal); // a paced model answers whole only at the end
    if (signal.aborted) return;
    return sendJson(res, 200, completionObject(body, reply, usage));
  }

  async function handleEmbeddings(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: any,
    plan: Plan,
    signal: AbortSignal,
  ): Promise<void> {
    if (!hasModel(body))
      return sendError(res, 400, 'invalid_request_error', null, 'you must provide a model parameter');
    const inputs = embeddingInputs(body.input);
    if (!inputs) {
      return sendError(res, 400, 'invalid_request_error', 'input', "'$.input' is invalid.", 'invalid_value');
    }
    const dims = body.dimensions ?? DEFAULT_DIMENSIONS;
    if (!Number.isInteger(dims) || dims < 1) {
      return sendError(res, 400, 'invalid_request_error', 'dimensions', `Invalid 'dimensions': ${dims}.`);
    }
    if (plan.invalid) return sendError(res, 400, 'invalid_request_error', null, plan.invalid, 'fake_unknown_directive');
    await sleep(plan.delayMs, signal);
    if (signal.aborted) return;
    if (plan.behaviour?.kind === 'fail') return sendFailure(res, plan.behaviour.status, plan.behaviour.code, body, req);

    const base64 = body.encoding_format === 'base64';
    const tokens = inputs.reduce((n, t) => n + countWords(t), 0);
    return sendJson(res, 200, {
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = fakeEmbedding(stripMarkers(input), dims);
        // The openai client asks for base64 (little-endian float32) by default and decodes it itself.
        const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      }),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      lifetime.abort();
      server.close(() => resolve());
      // Keep-alive sockets from the openai client (and slow requests) would otherwise hold close() open.
      server.closeAllConnections();
    });
    return closing;
  };

  return { url: `http://127.0.0.1:${port}/v1`, port, requests, close, script, reset };
}

// ---------------------------------------------------------------------------------------------------------------
// Directives

const MARKER_OPEN = '[[fake:';

/** Finds the "]]" closing a marker body, skipping JSON so tool-call arguments may themselves contain "]]". */
function markerEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && depth > 0) depth--;
    else if (c === ']' && text[i + 1] === ']') return i;
  }
  return -1;
}

function scanMarkers(text: string): { directives: string[]; stripped: string } {
  const directives: string[] = [];
  let stripped = '';
  let i = 0;
  for (;;) {
    const start = text.indexOf(MARKER_OPEN, i);
    const end = start < 0 ? -1 : markerEnd(text, start + MARKER_OPEN.length);
    if (end < 0) return { directives, stripped: stripped + text.slice(i) };
    directives.push(text.slice(start + MARKER_OPEN.length, end).trim());
    stripped += text.slice(i, start);
    i = end + 2;
  }
}

function stripMarkers(text: string): string {
  return scanMarkers(text).stripped;
}

function parseDirective(raw: string): Directive {
  if (raw === 'echo') return { kind: 'echo' };
  if (raw === 'cite') return { kind: 'cite' };
  if (raw === 'stream-then-fail') return { kind: 'stream-then-fail' };
  if (raw === 'malformed') return { kind: 'malformed' };
  if (raw === 'insufficient-quota') return { kind: 'fail', status: 429, code: 'insufficient_quota' };
  const slow = /^slow-(\d+)$/.exec(raw);
  if (slow) return { kind: 'slow', ms: Number(slow[1]) };
  const pace = /^pace-(\d+)-(\d+)(?:-(\d+))?$/.exec(raw);
  if (pace) {
    const chars = Number(pace[3] ?? 4);
    if (chars < 1 || Number(pace[2]) < Number(pace[1]))
      return { kind: 'invalid', message: `fake-openai: pace needs <first> <= <total> and <n> >= 1: ${raw}` };
    return { kind: 'pace', firstMs: Number(pace[1]), totalMs: Number(pace[2]), chars };
  }
  const length = /^length-(\d+)$/.exec(raw);
  if (length) return { kind: 'length', chars: Number(length[1]) };
  const fail = /^fail-([45]\d\d)$/.exec(raw);
  if (fail) return { kind: 'fail', status: Number(fail[1]), code: defaultCode(Number(fail[1])) };
  const tool = /^tool-call:([A-Za-z0-9_.-]+)(?::([\s\S]*))?$/.exec(raw);
  if (tool) {
    const args = tool[2]?.trim() || '{}';
    try {
      JSON.parse(args);
    } catch {
      return { kind: 'invalid', message: `fake-openai: tool-call arguments are not JSON: ${args}` };
    }
    return { kind: 'tool-call', name: tool[1], args };
  }
  const script = /^script:(.+)$/.exec(raw);
  if (script) return { kind: 'script', tag: script[1] };
  const tag = /^tag:(.+)$/.exec(raw);
  if (tag) return { kind: 'tag', tag: tag[1] };
  return { kind: 'invalid', message: `fake-openai: unknown directive "${raw}"` };
}

function planFor(body: any, endpoint: 'chat' | 'embeddings'): Plan {
  const plan: Plan = {
    delayMs: 0,
    pace: null,
    padTo: 0,
    cite: false,
    behaviour: null,
    invalid: null,
    raw: [],
    tags: [],
  };
  if (!body || typeof body !== 'object') return plan;
  const parsed: Directive[] = [];
  const texts =
    endpoint === 'chat'
      ? Array.isArray(body.messages)
        ? (body.messages as ChatMessage[]).map((m) => textOf(m?.content))
        : []
      : (embeddingInputs(body.input) ?? []);
  for (const text of texts) {
    for (const raw of scanMarkers(text).directives) {
      plan.raw.push(raw);
      parsed.push(parseDirective(raw));
    }
  }
  // A fake-* model name that is not a directive is just a model name ("fake-model").
  if (typeof body.model === 'string' && body.model.startsWith('fake-')) {
    const d = parseDirective(body.model.slice('fake-'.length));
    if (d.kind !== 'invalid') {
      plan.raw.unshift(body.model.slice('fake-'.length));
      parsed.push(d);
    }
  }
  for (const d of parsed) {
    if (d.kind === 'slow') plan.delayMs += d.ms;
    else if (d.kind === 'pace') plan.pace ??= { firstMs: d.firstMs, totalMs: d.totalMs, chars: d.chars };
    else if (d.kind === 'length') plan.padTo ||= d.chars;
    else if (d.kind === 'cite') plan.cite = true;
    else if (d.kind === 'tag') plan.tags.push(d.tag);
    else if (d.kind === 'invalid') plan.invalid ??= d.message;
    else {
      if (d.kind === 'script') plan.tags.push(d.tag);
      if (endpoint === 'embeddings' && d.kind !== 'fail') continue;
      plan.behaviour ??= d;
    }
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------------------------
// Answers

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: any) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? (p.text as string) : ''))
      .filter((t) => t.length > 0)
      .join('\n');
  }
  return '';
}

function lastUserText(messages: ChatMessage[]): string {
  const last = [...messages].reverse().find((m) => m?.role === 'user');
  return last ? stripMarkers(textOf(last.content)).trim() : '';
}

function defaultAnswer(messages: ChatMessage[], cite = false): string {
  const facts: string[] = [];
  for (const m of messages) {
    // A line starting `[n] ` opens passage n (the platform numbers its knowledge passages so).
    let passage: string | undefined;
    for (const line of stripMarkers(textOf(m?.content)).split(/\r?\n/)) {
      passage = /^\[(\d+)\] /.exec(line)?.[1] ?? passage;
      const fact = line.trim();
      const cited = cite && passage ? `${fact} [${passage}]` : fact;
      if (fact.startsWith('FACT:') && !facts.includes(cited)) facts.push(cited);
    }
  }
  return ['Fake answer: ' + lastUserText(messages), ...facts].join('\n');
}

/** Words the padding of `length-<n>` is made of, picked by the question so that different questions differ. */
const FILLER = (
  'our team ships orders within two working days and answers every message the same day; returns are free ' +
  'within thirty days, and the warranty covers two years of normal use for every product in the shop'
).split(' ');

function paddedAnswer(messages: ChatMessage[], padTo: number, cite = false): string {
  let answer = defaultAnswer(messages, cite);
  if (answer.length >= padTo) return answer;
  let seed = 0;
  for (const c of lastUserText(messages)) seed = (seed * 31 + c.charCodeAt(0)) >>> 0;
  for (let i = 0; answer.length < padTo; i++) answer += ' ' + FILLER[(seed + i * 7) % FILLER.length];
  return answer.slice(0, padTo);
}

const CONTINUE_REQUEST = 'Your answer above was cut off';

/** The rest of a cut-off answer, when the request asks for it (see the header); undefined otherwise. */
function continuedAnswer(messages: ChatMessage[], padTo: number, cite = false): string | undefined {
  const [assistant, ask] = messages.slice(-2);
  if (messages.length < 3 || assistant?.role !== 'assistant' || assistant.tool_calls?.length) return undefined;
  if (ask?.role !== 'user' || !textOf(ask.content).startsWith(CONTINUE_REQUEST)) return undefined;
  const shown = textOf(assistant.content);
  const whole = paddedAnswer(messages.slice(0, -2), padTo, cite);
  return whole.startsWith(shown) ? whole.slice(shown.length) : whole;
}

/** Content of the tool message answering a call to `name`, or undefined if the call has not been answered yet. */
function toolResultFor(messages: ChatMessage[], name: string): string | undefined {
  const toolMessages = messages.filter((m) => m?.role === 'tool');
  if (toolMessages.length === 0) return undefined;
  const ids = new Set<string>();
  for (const m of messages) {
    for (const call of m?.tool_calls ?? []) if (call?.function?.name === name && call.id) ids.add(call.id);
  }
  // Match by tool_call_id when the caller kept the assistant turn; otherwise any tool message counts.
  const answer = ids.size > 0 ? toolMessages.find((m) => m.tool_call_id && ids.has(m.tool_call_id)) : toolMessages[0];
  return answer ? stripMarkers(textOf(answer.content)) : undefined;
}

function applyMaxTokens(reply: Reply, body: any): Reply {
  const limit = body.max_completion_tokens ?? body.max_tokens;
  if (reply.content === null || reply.toolCalls.length > 0 || !Number.isInteger(limit) || limit < 1) return reply;
  const words = wordPieces(reply.content);
  if (words.length <= limit) return reply;
  return { ...reply, content: words.slice(0, limit).join('').trimEnd(), finishReason: 'length' };
}

function countWords(text: string): number {
  return (text.match(/\S+/g) ?? []).length;
}

/** Splits text into pieces "word + following whitespace" whose concatenation is exactly the text. */
function wordPieces(text: string): string[] {
  const pieces = text.match(/\s*\S+\s*/g) ?? [];
  return pieces.length > 0 ? pieces : text ? [text] : [];
}

function usageFor(messages: ChatMessage[], reply: Reply) {
  let prompt = 0;
  for (const m of messages) {
    prompt += countWords(stripMarkers(textOf(m?.content)));
    for (const call of m?.tool_calls ?? [])
      prompt += countWords(`${call?.function?.name ?? ''} ${call?.function?.arguments ?? ''}`);
  }
  let completion = countWords(reply.content ?? '');
  for (const call of reply.toolCalls) completion += countWords(`${call.name} ${call.arguments}`);
  prompt = Math.max(prompt, 1);
  completion = Math.max(completion, 1);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format

const randomId = (prefix: string, bytes = 12): string => prefix + randomBytes(bytes).toString('hex');
const now = (): number => Math.floor(Date.now() / 1000);

function modelObject(id: string) {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'fake-openai' };
}

function completionObject(body: any, reply: Reply, usage: ReturnType<typeof usageFor>) {
  const toolCalls = reply.toolCalls.map((c) => ({
    id: randomId('call_'),
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
  return {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: now(),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

function chunkFactory(body: any) {
  const id = randomId('chatcmpl-');
  const created = now();
  const includeUsage = body.stream_options?.include_usage === true;
  return (delta: object, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: body.model,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    // With include_usage OpenAI sends usage: null on every chunk and the totals in one extra final chunk.
    ...(includeUsage ? { usage: null } : {}),
  });
}

function startStream(res: http.ServerResponse): void {
  res.writeHead(200, {
    ...baseHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

function writeEvent(res: http.ServerResponse, data: unknown): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve();
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`, () => resolve());
  });
}

/** Pieces of `n` characters (token-sized), never splitting a surrogate pair. */
function fixedPieces(text: string, n: number): string[] {
  const out: string[] = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(''));
  return out;
}

/** Groups of a few words per delta, like a model emitting tokens. */
function contentDeltas(text: string): string[] {
  const pieces = wordPieces(text);
  const out: string[] = [];
  for (let i = 0; i < pieces.length; i += 3) out.push(pieces.slice(i, i + 3).join(''));
  return out;
}

async function streamReply(
  res: http.ServerResponse,
  body: any,
  reply: Reply,
  usage: ReturnType<typeof usageFor>,
  pace: Plan['pace'] = null,
  signal?: AbortSignal,
): Promise<void> {
  const chunk = chunkFactory(body);
  startStream(res);
  const hasTools = reply.toolCalls.length > 0;
  await writeEvent(res, chunk({ role: 'assistant', content: hasTools ? null : '', refusal: null }));
  const pieces = reply.content ? (pace ? fixedPieces(reply.content, pace.chars) : contentDeltas(reply.content)) : [];
  const started = Date.now();
  // Piece i is due at first + i/(n-1) of the rest: the first after `first` ms, the last at `total` ms.
  const due = (i: number) =>
    pace ? pace.firstMs + (pieces.length > 1 ? ((pace.totalMs - pace.firstMs) * i) / (pieces.length - 1) : 0) : 0;
  for (const [i, piece] of pieces.entries()) {
    if (pace) {
      // A plain timer that does not hold the process (the load benchmark runs hundreds of these streams beside the
      // platform, and an abort listener per piece cost it CPU); an abort is noticed when the timer fires.
      const wait = started + due(i) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (signal?.aborted || res.destroyed) return;
      res.write(`data: ${JSON.stringify(chunk({ content: piece }))}\n\n`);
      continue;
    }
    await writeEvent(res, chunk({ content: piece }));
  }
  // OpenAI streams each tool call as: {index, id, type, function: {name, arguments: ""}}, then argument fragments.
  for (const [index, call] of reply.toolCalls.entries()) {
    const id = randomId('call_');
    await writeEvent(
      res,
      chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (let i = 0; i < call.arguments.length; i += 8) {
      await writeEvent(
        res,
        chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + 8) } }] }),
      );
    }
  }
  await writeEvent(res, chunk({}, reply.finishReason ?? (hasTools ? 'tool_calls' : 'stop')));
  if (body.stream_options?.include_usage === true) {
    await writeEvent(res, { ...chunk({}), choices: [], usage });
  }
  await writeEvent(res, '[DONE]');
  res.end();
}

async function streamThenFail(res: http.ServerResponse, body: any, answer: string): Promise<void> {
  const chunk = chunkFactory(body);
  startStream(res);
  await writeEvent(res, chunk({ role: 'assistant', content: '', refusal: null }));
  for (const piece of contentDeltas(answer).slice(0, 2)) await writeEvent(res, chunk({ content: piece }));
  // Give the client time to read the deltas so the test sees a genuine mid-stream failure.
  await new Promise((r) => setTimeout(r, 20));
  res.destroy();
}

function baseHeaders(): Record<string, string> {
  return {
    'x-request-id': randomId('req_', 16),
    'openai-version': '2020-10-01',
    'openai-organization': 'fake-org',
    'openai-processing-ms': '1',
  };
}

function sendJson(res: http.ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const json = JSON.stringify(payload);
  res.writeHead(status, {
    ...baseHeaders(),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(json)),
    ...headers,
  });
  res.end(json);
}

function sendError(
  res: http.ServerResponse,
  status: number,
  type: string,
  param: string | null,
  message: string,
  code: string | null = null,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { message, type, param, code } }, headers);
}

function defaultCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

function maskKey(req?: http.IncomingMessage): string {
  const key = (req?.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  return key.length > 8 ? `${key.slice(0, 3)}${'*'.repeat(Math.min(key.length - 7, 20))}${key.slice(-4)}` : key;
}

/** OpenAI's real error bodies for the statuses tests care about; anything else gets a generic body. */
function sendFailure(
  res: http.ServerResponse,
  status: number,
  code: string | null,
  body: any,
  req?: http.IncomingMessage,
  message?: string,
): void {
  const model = typeof body?.model === 'string' ? body.model : 'gpt-4o-mini';
  if (code === 'invalid_api_key') {
    return sendError(
      res,
      status,
      'invalid_request_error',
      null,
      message ??
        `Incorrect API key provided: ${maskKey(req)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      code,
    );
  }
  if (code === 'insufficient_quota') {
    return sendError(
      res,
      status,
      'insufficient_quota',
      null,
      message ??
        'You exceeded your current quota, please check your plan and billing details. For more information on this ' +
          'error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
      code,
    );
  }
  if (status === 429) {
    return sendError(
      res,
      status,
      'requests',
      null,
      message ??
        `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 3, Used 3, ` +
          'Requested 1. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.',
      code,
      {
        'retry-after': '2',
        'x-ratelimit-limit-requests': '3',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '2s',
      },
    );
  }
  if (status === 500) {
    const text = message ?? 'The server had an error while processing your request. Sorry about that!';
    return sendError(res, status, 'server_error', null, text, code);
  }
  if (status === 503) {
    const text = message ?? 'The engine is currently overloaded, please try again later.';
    return sendError(res, status, 'server_error', null, text, code);
  }
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  return sendError(res, status, type, null, message ?? `fake-openai: simulated ${status} error`, code);
}

// ---------------------------------------------------------------------------------------------------------------
// Embeddings

function embeddingInputs(input: unknown): string[] | null {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return null;
  // Token-id inputs (number[] / number[][]) are hashed as their ids, which keeps them deterministic.
  if (input.every((x) => typeof x === 'number')) return [input.join(' ')];
  if (input.every((x) => typeof x === 'string')) return input as string[];
  if (input.every((x) => Array.isArray(x) && x.every((n) => typeof n === 'number'))) {
    return (input as number[][]).map((x) => x.join(' '));
  }
  return null;
}

function fnv1a(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Deterministic embedding: signed hashed bag of lower-cased words, L2-normalised, rounded to float32 so the float and
 * base64 encodings give identical numbers. Texts sharing words get a high cosine similarity.
 */
export function fakeEmbedding(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = fnv1a(word);
    // The sign bit keeps hash collisions from making unrelated texts look similar.
    v[h % dimensions] += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  return v.map((x) => Math.fround(x / norm));
}

// ---------------------------------------------------------------------------------------------------------------
// Plumbing

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Aborts when the client goes away before the response is complete, or when the server closes. */
function requestSignal(res: http.ServerResponse, lifetime: AbortSignal): AbortSignal {
  const ctl = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) ctl.abort();
  });
  return AbortSignal.any([ctl.signal, lifetime]);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Standalone process

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = arg === '--port' ? argv[++i] : arg.startsWith('--port=') ? arg.slice('--port='.length) : undefined;
    if (value === undefined || !/^\d+$/.test(value) || Number(value) > 65535) {
      process.stderr.write(`fake-openai: bad argument ${arg}${value === undefined ? '' : ' ' + value}\n\n${USAGE}`);
      process.exit(2);
    }
    port = Number(value);
  }
  const fake = await startFakeOpenAI({ port });
  process.stdout.write(JSON.stringify({ url: fake.url, port: fake.port }) + '\n');
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// `require.main` covers plain CJS; the argv check covers `node --import tsx`, whose entry may load through ESM hooks.
if (require.main === module || path.resolve(process.argv[1] ?? '') === __filename) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`fake-openai: ${String(err)}\n`);
    process.exit(1);
  });
}
