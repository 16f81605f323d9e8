/**
 * The widget's conversation apart from how it is drawn (web/widget/src/conversation.ts), driven as the components
 * drive it, against a loopback server that answers the widget's calls the way the API does (`/v1/widget/*`: JSON, and
 * the chat as an event stream). The real `createApi` and the real stream reader run; only the page's globals (its
 * storage, title and address) are stood in for, since there is no page.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
/**
 * The widget's sources are an ES module package whose files import each other without extensions (Vite resolves
 * them), which this project's TypeScript settings cannot follow from a test: the code comes through Jest, typed here
 * by what the test uses of it.
 */
interface Item {
  kind: 'message' | 'notice';
  key: string;
  id?: string;
  author?: string;
  text: string;
  [more: string]: unknown;
}
interface Conversation {
  state: { items: Item[]; draft: string; unread: number; status: string };
  start(): Promise<void>;
  setDraft(draft: string): void;
  setOpen(open: boolean): void;
  send(): Promise<boolean>;
  handoff(): Promise<void>;
  dispose(): void;
}
const { createApi } = jest.requireActual<{ createApi(base: string, key: string): unknown }>('../../web/widget/src/api');
const { Conversation } = jest.requireActual<{
  Conversation: new (api: unknown, publicKey: string, identity: object) => Conversation;
}>('../../web/widget/src/conversation');

const KEY = 'pk_test';

/** What the stand-in API does with each call; tests replace the parts they are about. */
interface Script {
  chat: (body: Record<string, unknown>, res: ServerResponse) => void;
  messages: (query: URLSearchParams) => { status: number; body: unknown };
  handoff: () => { status: number; body: unknown };
}

const sse = (res: ServerResponse, frames: unknown[], end = true) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
  if (end) res.end();
  // The connection breaks off before the end frame, once what was written has reached the widget.
  else setTimeout(() => res.socket?.destroy(), 50);
};

const emptyPoll = { status: 'bot', messages: [], next_cursor: 'c0' };
const defaultScript = (): Script => ({
  chat: (_body, res) =>
    sse(res, [
      { delta: 'Hello ' },
      { delta: 'there' },
      {
        done: true,
        session_id: 's1',
        message_id: 'm-answer',
        visitor_message_id: 'm-visitor',
        sources: [{ ref: 1, source_id: 'src_1', title: 'Returns' }],
      },
    ]),
  messages: () => ({ status: 200, body: emptyPoll }),
  handoff: () => ({ status: 200, body: { status: 'waiting' } }),
});

let script: Script;
const calls: { path: string; body?: Record<string, unknown> }[] = [];
let server: Server;
let base: string;

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : undefined;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url!, 'http://x');
      const body = await readBody(req);
      calls.push({ path: url.pathname, body });
      switch (url.pathname) {
        case '/v1/widget/config':
          return json(res, 200, {
            bot: { name: 'Shop' },
            handoff_enabled: true,
            attachments: { max_bytes: 1000, types: ['image/png'] },
            poll_interval_ms: 60_000, // the tests poll by hand (setOpen), never on the timer
          });
        case '/v1/widget/session':
          return json(res, 201, { session_id: 's1', visitor_token: 'vt_1' });
        case '/v1/widget/chat/stream':
          return script.chat(body ?? {}, res);
        case '/v1/widget/messages': {
          const { status, body: poll } = script.messages(url.searchParams);
          return json(res, status, poll);
        }
        case '/v1/widget/handoff': {
          const { status, body: answer } = script.handoff();
          return json(res, status, answer);
        }
        default:
          return json(res, 404, { error: 'no such route', code: 'not_found' });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

// The host page's globals: its storage, title and address.
const storage = new Map<string, string>();
beforeEach(() => {
  script = defaultScript();
  calls.length = 0;
  storage.clear();
  Object.assign(globalThis, {
    localStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
      removeItem: (k: string) => void storage.delete(k),
    },
    document: { title: 'Returns — Shop' },
    location: { origin: 'https://shop.example', pathname: '/help', search: '?token=secret' },
  });
});

let open: Conversation[] = [];
afterEach(() => {
  for (const c of open) c.dispose();
  open = [];
});

async function started(): Promise<Conversation> {
  const c = new Conversation(createApi(base, KEY), KEY, {});
  open.push(c);
  await c.start();
  return c;
}

/** Waits until `check` holds of the conversation's state (a poll runs on a timer of its own). */
async function until(c: Conversation, check: (s: Conversation['state']) => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(c.state); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check(c.state)).toBe(true);
}

const messages = (c: Conversation) =>
  c.state.items.filter((it) => it.kind === 'message').map((it) => ({ author: it.author, text: it.text, id: it.id }));
const notices = (c: Conversation) => c.state.items.filter((it) => it.kind === 'notice').map((it) => it.text);

describe("the widget's conversation, apart from the page", () => {
  it('streams an answer into the timeline; the end frame gives both messages their ids and makes the answer rateable', async () => {
    const c = await started();
    c.setDraft('Can I return shoes?');
    expect(await c.send()).toBe(true);

    expect(c.state.draft).toBe('');
    expect(messages(c)).toEqual([
      { author: 'visitor', text: 'Can I return shoes?', id: 'm-visitor' },
      { author: 'bot', text: 'Hello there', id: 'm-answer' },
    ]);
    const answer = c.state.items[1];
    expect(answer).toMatchObject({ pending: false, rateable: true, sources: [{ source_id: 'src_1' }] });
    // The conversation outlives the page, and the page's query string never reaches the bot.
    expect(JSON.parse(storage.get(`ap-widget:${KEY}`)!)).toEqual({ session_id: 's1', visitor_token: 'vt_1' });
    const chat = calls.find((x) => x.path === '/v1/widget/chat/stream')!;
    expect(chat.body).toMatchObject({ session_id: 's1', message: 'Can I return shoes?' });
    expect(chat.body!.page_context).toBe('Page: Returns — Shop\nAddress: https://shop.example/help');
  });

  it('does not show a message twice when the poll brings what the stream already showed', async () => {
    const c = await started();
    c.setDraft('Can I return shoes?');
    await c.send();
    script.messages = () => ({
      status: 200,
      body: {
        status: 'bot',
        next_cursor: 'c1',
        messages: [
          { id: 'm-visitor', author: 'visitor', text: 'Can I return shoes?', at: 1 },
          { id: 'm-answer', author: 'bot', text: 'Hello there', at: 2 },
          { id: 'm-op', author: 'operator', text: 'Hi, Ana here', at: 3 },
        ],
      },
    });
    c.setOpen(true);
    await until(c, (s) => s.items.length === 3);
    expect(messages(c).map((m) => m.id)).toEqual(['m-visitor', 'm-answer', 'm-op']);
    expect(c.state.unread).toBe(0); // read with the panel open
  });

  it('gives the text back to the message box when the message never reached the service, keeping what was typed since', async () => {
    script.chat = (_body, res) => json(res, 503, { error: 'Busy', code: 'service_unavailable', retry_after: 2 });
    const c = await started();
    c.setDraft('First question');
    const sending = c.send();
    c.setDraft('and more');
    expect(await sending).toBe(false);
    expect(messages(c)).toEqual([]);
    expect(c.state.draft).toBe('First question\nand more');
    expect(c.state.items.at(-1)).toMatchObject({ kind: 'notice', action: 'retry-send' });
  });

  it('keeps a message whose answer broke off, says the answer will come, and rates the answer the poll then brings', async () => {
    script.chat = (_body, res) => sse(res, [{ delta: 'Part of an ans' }], false);
    const c = await started();
    c.setDraft('Where is my order?');
    expect(await c.send()).toBe(true);
    expect(messages(c)).toEqual([{ author: 'visitor', text: 'Where is my order?', id: undefined }]);
    expect(notices(c)).toEqual(['The connection broke off during the answer. It will appear here when it is ready.']);

    script.messages = () => ({
      status: 200,
      body: {
        status: 'bot',
        next_cursor: 'c1',
        messages: [
          { id: 'm-visitor', author: 'visitor', text: 'Where is my order?', at: 1 },
          { id: 'm-late', author: 'bot', text: 'It ships tomorrow.', at: 2 },
        ],
      },
    });
    c.setOpen(true);
    await until(c, (s) => s.items.some((it) => it.id === 'm-late'));
    expect(notices(c)).toEqual([]);
    expect(c.state.items.find((it) => it.id === 'm-late')).toMatchObject({ rateable: true });
  });

  it('after a hand-over, waits for a person: offers go, and the team’s replies count as unread while closed', async () => {
    const c = await started();
    c.setDraft('Hello');
    await c.send();
    await c.handoff();
    expect(c.state.status).toBe('waiting');
    expect(calls.filter((x) => x.path === '/v1/widget/handoff')).toHaveLength(1);

    // Closed, but a person handles it: the poll goes on, and their reply is unread.
    script.messages = () => ({
      status: 200,
      body: {
        status: 'operator',
        next_cursor: 'c2',
        messages: [{ id: 'm-op', author: 'operator', text: 'Ana here', at: 5 }],
      },
    });
    c.setOpen(true);
    c.setOpen(false);
    await until(c, (s) => s.status === 'operator');
    expect(c.state.unread).toBe(1);
    c.setOpen(true);
    expect(c.state.unread).toBe(0);
  });

  it('starts afresh when the stored conversation is gone (erased: the poll answers 404)', async () => {
    storage.set(`ap-widget:${KEY}`, JSON.stringify({ session_id: 'gone', visitor_token: 'vt_old' }));
    script.messages = () => ({ status: 404, body: { error: 'No such conversation', code: 'not_found' } });
    const c = await started();
    expect(storage.has(`ap-widget:${KEY}`)).toBe(false);
    expect(c.state.items).toEqual([]);
    // The next message starts a new conversation.
    script.messages = () => ({ status: 200, body: emptyPoll });
    c.setDraft('Hi again');
    await c.send();
    expect(calls.filter((x) => x.path === '/v1/widget/session')).toHaveLength(1);
  });
});
