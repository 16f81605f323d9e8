import { afterAll, beforeAll } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { bootstrapWorkspace, type BootstrapInput, type BootstrapResult } from '../../lib/accounts/service';
import { createDb, type Db, type Queryable } from '../../lib/db';
import { createSecretBox } from '../../lib/secret-box';
import { startApi, startWorker, waitForApi } from '../../stack/platform';
import { type ManagedProcess, freePort } from '../../stack/processes';
import { stackInfo } from './stack-info';

let sharedDb: Db | undefined;

// Registered when a test file imports this module, so the pool is closed after that file's tests.
afterAll(async () => {
  await sharedDb?.end();
  sharedDb = undefined;
});

/**
 * A Temporal client on the test stack for the file (or describe block) that calls this: connected before its tests,
 * closed after. It stands for the client from the start, so a file can name it once at the top.
 */
export function useTemporalClient(): Client {
  let connection: Connection | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    connection = await Connection.connect({ address: stackInfo().temporalAddress });
    client = new Client({ connection, namespace: stackInfo().namespace });
  });
  afterAll(async () => connection?.close());
  return new Proxy({} as Client, {
    get(_, name) {
      if (!client) throw new Error('useTemporalClient: the client is there once the tests run, not before');
      return Reflect.get(client, name, client);
    },
  });
}

/** A pool on the test stack's database. */
export function testDb(): Db {
  sharedDb ??= createDb(stackInfo().databaseUrl, { max: 4, applicationName: 'jest' });
  return sharedDb;
}

/** A conversation's stored messages in order, as who said what: what a turn that survived a fault must have left. */
export async function transcriptOf(
  sessionId: string,
  db: Queryable = testDb(),
): Promise<{ author: string; text: string }[]> {
  const res = await db.query<{ author: string; text: string }>(
    `SELECT author, text FROM messages WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return res.rows;
}

/** Waits until one of the bot's chat turns is running (its run recorded, the model not done): the moment to break a part. */
export async function turnRunning(botId: string, db: Queryable = testDb()): Promise<void> {
  await waitUntil('the turn to be running', async () => {
    const run = await db.query(
      `SELECT 1 FROM runs WHERE bot_id = $1 AND trigger_kind = 'message' AND status = 'running'`,
      [botId],
    );
    return (run.rowCount ?? 0) > 0;
  });
}

/** Each test makes its own workspace and bot: no shared mutable fixtures. */
export async function newBot(input: BootstrapInput = {}): Promise<BootstrapResult> {
  return bootstrapWorkspace(testDb(), createSecretBox(stackInfo().secretEncryptionKey), input);
}

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * The client address this test file's requests come from, as a balancer reports it (`X-Forwarded-For`; the test
 * stack's API and the in-process ones trust it). Each file is its own client, as the people using a deployment are:
 * per-address limits count in shared Postgres windows, and files running at once from loopback used to spend one
 * another's budget (a reset request refused in one file because another asked for resets in the same minute).
 * An address of 198.18.0.0/15, the range set aside for tests, made from the file's path.
 */
export function testClientAddress(): string {
  const file = (globalThis as { expect?: { getState(): { testPath?: string } } }).expect?.getState().testPath ?? '';
  const [a, b] = createHash('sha256').update(file).digest();
  return `198.18.${a}.${b}`;
}

let nextClientAddress = randomBytes(2).readUInt16BE();
/**
 * A client address no other test uses, for a test that counts one address's requests against a limit: in
 * 198.19.0.0/16 (the upper half of the range set aside for tests; testClientAddress keeps to 198.18.0.0/16), so that
 * files running at once do not land in each other's per-address windows, as hand-picked ranges did.
 */
export function uniqueClientAddress(): string {
  // Consecutive from a random start: never the same twice in one file, and two files' runs rarely meet.
  nextClientAddress = (nextClientAddress + 1) % 65_536;
  return `198.19.${nextClientAddress >> 8}.${nextClientAddress & 255}`;
}

/** A request to the test stack's API; the body is parsed as JSON when it is JSON. */
export async function http<T = any>(
  path: string,
  init: {
    method?: string;
    key?: string;
    body?: unknown;
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
    baseUrl?: string;
  } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { 'X-Forwarded-For': testClientAddress(), ...(init.headers ?? {}) };
  if (init.key) headers['X-Bot-Key'] = init.key;
  let body: string | Buffer | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${init.baseUrl ?? stackInfo().apiUrl}${path}`, {
    method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
    headers,
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) parsed = text ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** One JSON-RPC message POSTed to the builder's MCP endpoint, as a stateless client of the current protocol does. */
export function mcpPost(message: object, opts: { key?: string; baseUrl?: string } = {}): Promise<HttpResult> {
  return http('/v1/api/mcp', {
    headers: {
      ...(opts.key ? { Authorization: `Bearer ${opts.key}` } : {}),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    rawBody: JSON.stringify(message),
    baseUrl: opts.baseUrl,
  });
}

/** Runs `agentctl` as a user would (`npx agentctl …` resolves to cli/bin.js), with the given environment. */
export async function agentctl(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(__dirname, '..', '..', 'cli', 'bin.js'), ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, cwd: '/', timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Reads a whole `text/event-stream` response into its `data:` frames, checking the framing as it goes. */
export async function sseFrames(
  path: string,
  init: { key: string; body: unknown; headers?: Record<string, string>; baseUrl?: string },
): Promise<{ status: number; headers: Headers; frames: Record<string, unknown>[]; raw: string }> {
  const res = await fetch(`${init.baseUrl ?? stackInfo().apiUrl}${path}`, {
    method: 'POST',
    headers: { 'X-Bot-Key': init.key, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
    body: JSON.stringify(init.body),
  });
  const raw = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: res.status, headers: res.headers, frames: [], raw };
  }
  const blocks = raw.split('\n\n');
  if (blocks.at(-1) !== '')
    throw new Error(`stream does not end with an empty line: ${JSON.stringify(raw.slice(-50))}`);
  const frames = blocks.slice(0, -1).map((block) => {
    if (!block.startsWith('data: ') || block.includes('\n'))
      throw new Error(`not a single data line: ${JSON.stringify(block)}`);
    return JSON.parse(block.slice('data: '.length)) as Record<string, unknown>;
  });
  return { status: res.status, headers: res.headers, frames, raw };
}

/** Signs the bot's owner in to the dashboard; returns headers carrying the session cookie. */
export async function ownerSession(bot: BootstrapResult): Promise<Record<string, string>> {
  const res = await http('/v1/auth/login', { body: { email: bot.email, password: bot.password } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  return { Cookie: cookie };
}

/** A request the fake OpenAI received; a chat completion's holds the token counts it was answered with. */
export interface FakeRequest {
  body: Record<string, any>;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** Chat-completion requests the fake OpenAI received carrying `[[fake:tag:<tag>]]` (or a script tag). */
export async function fakeRequests(tag: string): Promise<FakeRequest[]> {
  const base = stackInfo().fakeOpenAIUrl.replace(/\/v1\/?$/, '');
  const res = await fetch(`${base}/_control/requests?tag=${encodeURIComponent(tag)}`);
  const json = (await res.json()) as { requests: FakeRequest[] } | FakeRequest[];
  return Array.isArray(json) ? json : json.requests;
}

/** A tool call of a scripted fake model's answer (FakeScriptStep.toolCalls): its arguments as the model sends them. */
export const toolCall = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

/** The text of an MCP tool result (its text contents, joined). */
export const toolText = (result: { content?: unknown }) =>
  ((result.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('');

/** One answer of a scripted fake model: text, tool calls, a delay or a failure status (test/support/fake-openai.ts). */
export interface FakeScriptStep {
  text?: string;
  toolCalls?: { name: string; arguments: string }[];
  delayMs?: number;
  status?: number;
}

/**
 * Scripts the fake model's next answers for the requests carrying the returned marker (the steps are consumed in
 * order, the last repeats); the tag reads those requests back with `fakeRequests`.
 */
export async function scriptFakeModel(
  steps: FakeScriptStep[],
  label = 'script',
): Promise<{ marker: string; tag: string }> {
  const tag = `${label}-${randomBytes(8).toString('hex')}`;
  const base = stackInfo().fakeOpenAIUrl.replace(/\/v1\/?$/, '');
  const res = await fetch(`${base}/_control/script`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ tag, steps }),
  });
  if (res.status !== 200) throw new Error(`script: ${res.status}`);
  return { marker: `[[fake:script:${tag}]]`, tag };
}

/** A real HTTP server on loopback standing in for an action's target; records every call. */
export async function startActionTarget(status = 200) {
  const { createServer } = await import('node:http');
  const calls: { method: string; url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push({ method: req.method ?? '', url: req.url ?? '', body });
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: status < 400, n: calls.length }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/act`, calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Polls `probe` until it returns something truthy, or fails naming what it waited for. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false | null>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface OwnPlatform {
  baseUrl: string;
  env: Record<string, string>;
  worker: ManagedProcess;
  /** Kills the worker (SIGKILL by default, as a crash) and starts a new one on the same task queue. */
  restartWorker(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the worker (SIGTERM by default: it shuts down, closing its polls), leaving the task queue without one. */
  stopWorker(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a worker on the task queue again, after `stopWorker`. */
  startWorker(): Promise<void>;
  /** Kills the API (SIGKILL by default, as a crash) and starts a new one on the same port. */
  restartApi(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A worker and an API of the test's own, on a task queue of their own, sharing the run's Postgres and Temporal:
 * for tests that need another configuration (no LLM, SMTP, embeddings) or that kill the worker. `undefined` in
 * `env` removes a variable.
 */
export async function startOwnPlatform(
  name: string,
  env: Record<string, string | undefined> = {},
): Promise<OwnPlatform> {
  const port = await freePort();
  const merged: Record<string, string | undefined> = {
    ...stackInfo().env,
    TEMPORAL_TASK_QUEUE: `${name}-${randomBytes(4).toString('hex')}`,
    PORT: String(port),
    // Its links (media, trigger addresses, e-mails) point at itself.
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...env,
  };
  const full = Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
  const own: OwnPlatform = {
    baseUrl: `http://127.0.0.1:${port}`,
    env: full,
    worker: await startWorker(full, { quiet: true }),
    async restartWorker(signal = 'SIGKILL') {
      await own.stopWorker(signal);
      await own.startWorker();
    },
    async stopWorker(signal = 'SIGTERM') {
      await own.worker.stop(signal);
    },
    async startWorker() {
      own.worker = await startWorker(full, { quiet: true });
    },
    async restartApi(signal = 'SIGKILL') {
      await api.stop(signal);
      api = startApi(full, { quiet: true });
      await waitForApi(own.baseUrl, api);
    },
    async stop() {
      await api.stop();
      await own.worker.stop();
    },
  };
  let api = startApi(full, { quiet: true });
  await waitForApi(own.baseUrl, api);
  return own;
}

/**
 * A request through node:http, for what fetch() will not send: headers a browser sets itself (`Origin`,
 * `Sec-Fetch-Site`) and methods such as TRACE. The body is parsed as JSON when it is JSON.
 */
export async function rawRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any; text: string }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: the text as is
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Rate limits count in fixed one-minute windows of the database's clock (lib/rate-windows.ts): a test that sends a
 * limit's worth of requests and expects the next one refused waits, when less than `needMs` of the minute is left,
 * for the next one to start, so that all of its requests fall in one window.
 */
export async function inOneRateWindow(needMs = 20_000): Promise<void> {
  const res = await testDb().query<{ ms: number }>(
    `SELECT (extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()) * 1000)::int AS ms`,
  );
  const left = res.rows[0].ms;
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 250));
}
