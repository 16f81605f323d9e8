import { type StreamFrame, readFrames } from '../../../shared/sse';

/**
 * The dashboard's one way to call the API: same origin, the session cookie, JSON both ways. Errors are `{error,
 * code}` (contract, Errors); a page branches on `status` and `code` and shows `message` (the API's `error` text) when
 * nothing better is known. A 401 `unauthorized` (no session, or it ended) is also told to the listener the app
 * installs, which sends the browser to /signin?next=… from the pages that need a session.
 */

export interface Failure {
  status: number;
  code: string;
  message: string;
  /** Seconds, from `Retry-After` on 429. */
  retryAfter?: number;
}

export type Result<T> = { ok: true; value: T } | ({ ok: false } & Failure);

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

let unauthorizedListener: ((failure: Failure) => void) | undefined;

/** The app's reaction to a session that is missing or ended (one listener; a new one replaces the old). */
export function onUnauthorized(listener: ((failure: Failure) => void) | undefined): void {
  unauthorizedListener = listener;
}

/** Calls the API with a JSON body, or a file (a `Blob`: an image sent as its own type). */
export async function call<T>(
  method: Method,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Result<T>> {
  let res: Response;
  const headers: Record<string, string> = {
    ...(body === undefined
      ? { Accept: 'application/json' }
      : { 'Content-Type': body instanceof Blob ? body.type || 'application/octet-stream' : 'application/json' }),
    ...extraHeaders,
  };
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers,
      body: body === undefined ? undefined : body instanceof Blob ? body : JSON.stringify(body),
    });
  } catch {
    return { ok: false, status: 0, code: 'network', message: 'The service cannot be reached. Check your connection.' };
  }
  const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (res.ok) return { ok: true, value: json as T };
  return failureOf(res, json);
}

/** A refused request as a `Result` (contract, Errors: `{error, code}`); a 401 also tells the app's listener. */
function failureOf(res: Response, json: Record<string, unknown> | undefined): { ok: false } & Failure {
  const failure: Failure = {
    status: res.status,
    code: typeof json?.code === 'string' ? json.code : 'error',
    message: typeof json?.error === 'string' ? json.error : `The service answered ${res.status}.`,
    retryAfter: Number(res.headers.get('Retry-After')) || undefined,
  };
  if (failure.status === 401 && failure.code === 'unauthorized') unauthorizedListener?.(failure);
  return { ok: false, ...failure };
}

/**
 * POSTs JSON to a chat stream and hands each frame to `onFrame` as it arrives (contract, chat/stream). Resolves once the
 * stream ended: a failure before the stream (auth, validation, limits) is a `Result` failure as `call` gives one; a
 * stream that broke off without its end frame is one with status 0.
 */
export async function stream(
  path: string,
  body: unknown,
  onFrame: (frame: StreamFrame) => void,
): Promise<Result<void>> {
  const unreachable = { ok: false as const, status: 0, code: 'network', message: 'The service cannot be reached.' };
  let res: Response;
  try {
    res = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
    });
  } catch {
    return unreachable;
  }
  if (!res.ok || !res.body) {
    return failureOf(res, (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined);
  }
  const { ended } = await readFrames(res.body, onFrame);
  return ended ? { ok: true, value: undefined } : { ...unreachable, message: 'The answer broke off.' };
}

/** A path segment from an id the API gave (ids are plain, but a typed address could hold anything). */
export const seg = (value: string) => encodeURIComponent(value);

/** `?a=1&b=2` from the defined values, '' when there are none. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(key, `${value}`);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * A random `Idempotency-Key`, the same for every try of one action (crypto.randomUUID needs a secure context; a
 * dashboard on a LAN address may not be one).
 */
export function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}
