import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

/**
 * The `fetch` the `openai` client uses to reach the model's API (its `fetch` option): node:http with kept-alive
 * connections instead of the global fetch (undici). A model streams its answer a token at a time, each in a network
 * read of its own, to hundreds of turns at once; undici hands every read through a web stream and a promise, which
 * was a large part of what a streamed turn cost (docs/decisions/119-streamed-turn-cpu.md). Here the
 * response's node stream is kept: `bodyOf` gives it to the reader (lib/llm.ts), which takes each read as an event. The
 * `Response` still has a body for whoever reads it the standard way (the client, for an error's text), bridged only
 * when read.
 *
 * The model's address is the operator's configuration, not a user's, so this is not the SSRF-safe client
 * (lib/http/safe-fetch.ts), which refuses the private addresses a self-hosted model lives on.
 */
export interface ModelFetch {
  fetch: typeof fetch;
  /** The node stream behind a response this fetch returned; undefined for any other response. */
  bodyOf(response: Response): IncomingMessage | undefined;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * How long a kept-alive connection may wait unused before this side closes it. Node's agent also closes it a second
 * before the time a server announces (`Keep-Alive: timeout=5` from a Node server), but only when this is set.
 */
const IDLE_CONNECTION_MS = 30_000;

/**
 * A request written to a kept-alive connection that the server was closing at that moment fails before any answer
 * (`ECONNRESET`, "socket hang up"): the server never read it, so it goes once more on a new connection (Node's
 * documentation, `request.reusedSocket`). Under load, with hundreds of connections idle for seconds, the race is
 * met now and then: the likely cause of rare error frames in the load benchmark (docs/decisions/126-model-connection-retry.md). A connection
 * of its own, not the agent's next idle one: the server closes connections idle as long at the same moment, so the
 * next one may be closing too (seen once in thousands of turns at 300 visitors).
 */
function closedUnderUs(request: http.ClientRequest, err: NodeJS.ErrnoException): boolean {
  return request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
}

export function createModelFetch(): ModelFetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  };
  const bodies = new WeakMap<Response, IncomingMessage>();

  const modelFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    const body = init.body;
    // What the client sends is JSON text; anything else (a form, a stream) goes the standard way.
    if (input instanceof Request || (body != null && typeof body !== 'string') || !(url.protocol in agents)) {
      return fetch(input, init);
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError());
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    if (body != null) headers['content-length'] = String(Buffer.byteLength(body));

    return new Promise<Response>((resolve, reject) => {
      let answered = false;
      const send = (retried: boolean) => {
        const request = (url.protocol === 'https:' ? https : http).request(
          url,
          // The retry's connection is new and closes after its answer (`agent: false`).
          {
            method: init.method ?? 'GET',
            headers,
            agent: retried ? false : agents[url.protocol as keyof typeof agents],
          },
          (res) => {
            answered = true;
            const responseHeaders = new Headers();
            for (let i = 0; i < res.rawHeaders.length; i += 2)
              responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
            const status = res.statusCode ?? 0;
            const response = new Response(NULL_BODY_STATUSES.has(status) ? null : bridged(res), {
              status,
              statusText: res.statusMessage,
              headers: responseHeaders,
            });
            if (NULL_BODY_STATUSES.has(status)) res.resume();
            else bodies.set(response, res);
            // An abort after the answer began stops its body: the reader sees the stream fail.
            signal?.addEventListener('abort', () => res.destroy(abortError()), { once: true });
            resolve(response);
          },
        );
        request.on('error', (err: NodeJS.ErrnoException) => {
          if (!answered && !retried && !signal?.aborted && closedUnderUs(request, err)) send(true);
          else reject(requestError(err));
        });
        signal?.addEventListener('abort', () => request.destroy(abortError()), { once: true });
        request.end(body ?? undefined);
      };
      send(false);
    });
  };

  return { fetch: modelFetch as typeof fetch, bodyOf: (response) => bodies.get(response) };
}

/** A web stream over the node stream, attached on the first read (none when the body is read from the node stream). */
function bridged(res: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (res.listenerCount('data')) return;
        res.on('data', (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk)));
        res.on('end', () => controller.close());
        res.on('error', (err) => controller.error(err));
      },
      cancel() {
        res.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A failed request as an `Error` of this module's realm, keeping the network's code (ECONNRESET…) for the error the
 * client raises: the client keeps an `instanceof Error` as it is and copies anything else without its code (see
 * abortError on realms).
 */
function requestError(err: NodeJS.ErrnoException): Error {
  return Object.assign(new Error(err.message), { name: err.name, code: err.code });
}

/**
 * What fetch rejects with when its signal aborts: an `AbortError`, which the `openai` client recognizes (its timeout
 * is such an abort). An `Error` of this module's realm, named so, rather than the signal's reason: the client checks
 * `instanceof Error` before it looks at the name, and a reason made elsewhere (another realm) would fail that check.
 */
function abortError(): Error {
  const err = new Error('The request was aborted');
  err.name = 'AbortError';
  return err;
}

/**
 * Reads a response's body to its end as UTF-8 text, handing what each network read brought to `onText` in one piece
 * (a character split between reads is kept for the next); a promise `onText` returns holds the reading until it
 * settles. Rejects when the body fails or closes before its end, or when `onText` throws.
 *
 * `onText` may let the connection rest: `rest(ms)` stops reading the socket for `ms` once this read is handled, so
 * what the server sends meanwhile waits in the kernel and comes in one read. A model sends a token every few
 * milliseconds to each of hundreds of turns, and every network read costs the worker a wake-up, the HTTP parser and
 * the stream's machinery (docs/decisions/119-streamed-turn-cpu.md).
 */
export function readText(
  res: IncomingMessage,
  onText: (text: string, rest: (ms: number) => void) => void | Promise<void>,
): Promise<void> {
  res.setEncoding('utf8');
  const resting = restingSocket(res);
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    /** A promise `onText` returned holds the reading. */
    let held = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      res.destroy();
      reject(err);
    };
    // Paused mode: `read()` returns everything parsed since the last one, joined. It is called once the event loop
    // has handled every read that was ready: a TLS connection hands on each record of a network read separately.
    let scheduled = false;
    const drainSoon = () => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        drain();
      });
    };
    const drain = () => {
      while (!settled && !held) {
        const text = res.read() as string | null;
        if (text === null) return;
        let pending: void | Promise<void>;
        try {
          pending = onText(text, resting);
        } catch (err) {
          return fail(err);
        }
        if (pending) {
          held = true;
          pending.then(() => {
            held = false;
            drain();
          }, fail);
        }
      }
    };
    res.on('readable', drainSoon);
    res.on('end', () => {
      if (settled) return;
      settled = true;
      resolve();
    });
    res.on('error', fail);
    res.on('close', () => fail(new Error('The connection to the model closed before its answer ended')));
  });
}

/** What node's sockets keep of their libuv handle: whether it reads, and the calls that start and stop it. */
interface ReadingHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

/**
 * The `rest` of `readText`: stops the socket's handle from reading for a while (node has no public call for this:
 * `socket.pause()` only stops handing on what is read). It stops after the current read's callbacks, so node's own
 * bookkeeping for that read cannot start it again; and it always starts again, even if the response ended meanwhile,
 * because a kept-alive socket goes back to the agent for the next request.
 */
function restingSocket(res: IncomingMessage): (ms: number) => void {
  const socket = res.socket;
  const handle = (socket as unknown as { _handle?: Partial<ReadingHandle> } | null)?._handle;
  if (typeof handle?.readStop !== 'function' || typeof handle.readStart !== 'function') return () => undefined;
  const h = handle as ReadingHandle;
  let asked = 0;
  return (ms) => {
    if (ms <= 0 || asked) return;
    asked = ms;
    setImmediate(() => {
      const ms = asked;
      asked = 0;
      if (!h.reading || res.complete || socket!.destroyed) return;
      h.reading = false;
      h.readStop();
      setTimeout(() => {
        if (h.reading || socket!.destroyed) return;
        h.reading = true;
        h.readStart();
      }, ms);
    });
  };
}
