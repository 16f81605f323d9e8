import { type StreamFrame, readFrames } from '../../shared/sse';
import type {
  HandoffResponse,
  WidgetConfig as WidgetConfigView,
  WidgetMessage,
  WidgetPoll,
  WidgetSession,
} from '../../shared/contract';

/** The server's own types (web/shared/contract.ts): a change there fails this build, not a visitor's screen. */
export type { Attachment } from '../../shared/contract';
/** Spec, Message: an unknown `author` is still shown (as its text line). */
export type Message = WidgetMessage;
/** Spec, Poll response, with the widget's additions. */
export type Poll = WidgetPoll;
export type Session = WidgetSession;

/**
 * The widget's calls to `/v1/widget/*` (docs/widget.md), from the host page to the API's origin. Every call carries
 * the public key as `?key=` (a CORS preflight carries no header values, so the key must be in the address for the API
 * to answer it for the bot's own origins); calls about a session also send `X-Visitor-Token`. Errors are
 * `{error, code}`; a refused or unreachable call (CORS, offline) is status 0, code `network`.
 */

/**
 * The configuration: the bot's name, handoff, images, polling; whether a person is there to answer (`team`) and the
 * owner's look (`look`) are read as absent from older APIs.
 */
export type WidgetConfig = Omit<WidgetConfigView, 'team' | 'look'> & Partial<Pick<WidgetConfigView, 'team' | 'look'>>;

export interface Identity {
  user_token?: string;
  user_auth?: string;
}

export interface Failure {
  ok: false;
  /** HTTP status; 0 when no answer came (network, CORS refusal) or the stream broke off. */
  status: number;
  code: string;
  message: string;
  /** Seconds, from `retry_after` in the body or the `Retry-After` header. */
  retryAfter?: number;
}

export type Result<T> = { ok: true; value: T } | Failure;

const NETWORK: Failure = {
  ok: false,
  status: 0,
  code: 'network',
  message: 'The chat service cannot be reached. Check your connection.',
};

async function failure(res: Response): Promise<Failure> {
  const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  const fromBody = typeof json?.retry_after === 'number' ? json.retry_after : undefined;
  // `Retry-After` is readable across origins only when the API exposes it; the body's `retry_after` does not need to be.
  const retryAfter = fromBody ?? (Number(res.headers.get('Retry-After')) || undefined);
  return {
    ok: false,
    status: res.status,
    code: typeof json?.code === 'string' ? json.code : 'error',
    message: typeof json?.error === 'string' ? json.error : `The chat service answered ${res.status}.`,
    retryAfter,
  };
}

export type WidgetApi = ReturnType<typeof createApi>;

export function createApi(base: string, key: string) {
  const url = (path: string, query: Record<string, string | undefined> = {}) => {
    const params = new URLSearchParams({ key });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
    return `${base}${path}?${params.toString()}`;
  };

  const headers = (session?: Session, contentType?: string): Record<string, string> => ({
    ...(contentType ? { 'Content-Type': contentType } : {}),
    ...(session ? { 'X-Visitor-Token': session.visitor_token } : {}),
  });

  async function send(
    method: 'GET' | 'POST',
    path: string,
    opts: { session?: Session; query?: Record<string, string | undefined>; json?: unknown; signal?: AbortSignal } = {},
  ): Promise<Response | Failure> {
    try {
      return await fetch(url(path, opts.query), {
        method,
        // The widget has no cookies of its own: the visitor token is the conversation's only credential.
        credentials: 'omit',
        headers: headers(opts.session, opts.json === undefined ? undefined : 'application/json'),
        body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
        signal: opts.signal,
      });
    } catch {
      return NETWORK;
    }
  }

  async function call<T>(...args: Parameters<typeof send>): Promise<Result<T>> {
    const res = await send(...args);
    if (!(res instanceof Response)) return res;
    if (!res.ok) return failure(res);
    const value = (await res.json().catch(() => undefined)) as T | undefined;
    return value === undefined ? { ...NETWORK, status: res.status } : { ok: true, value };
  }

  return {
    config: () => call<WidgetConfig>('GET', '/v1/widget/config'),

    createSession: () => call<Session>('POST', '/v1/widget/session'),

    messages: (session: Session, cursor?: string, signal?: AbortSignal) =>
      call<Poll>('GET', '/v1/widget/messages', { session, query: { session_id: session.session_id, cursor }, signal }),

    handoff: (session: Session) =>
      call<HandoffResponse>('POST', '/v1/widget/handoff', { session, json: { session_id: session.session_id } }),

    typing: (session: Session) =>
      call<{ status: string }>('POST', '/v1/widget/typing', { session, json: { session_id: session.session_id } }),

    rating: (session: Session, ref: string, rating: 'up' | 'down') =>
      call<{ status: string }>('POST', '/v1/widget/rating', {
        session,
        json: { session_id: session.session_id, ref, rating },
      }),

    satisfaction: (session: Session, input: { score: number; comment?: string }) =>
      call<{ status: string }>('POST', '/v1/widget/satisfaction', {
        session,
        json: { session_id: session.session_id, ...input },
      }),

    contact: (session: Session, input: { contact: string; name?: string; note?: string }) =>
      call<{ status: string }>('POST', '/v1/widget/contact', {
        session,
        json: { session_id: session.session_id, ...input },
      }),

    /**
     * The image's bytes as the body, with its own type (the API recognises the type from the bytes anyway). 201 is
     * the visitor's message holding it; 200 is a ChatResponse instead when the monthly quota is used up (nothing kept).
     */
    async upload(session: Session, file: Blob): Promise<Result<{ message?: Message; answer?: string }>> {
      let res: Response;
      try {
        res = await fetch(url('/v1/widget/attachments', { session_id: session.session_id }), {
          method: 'POST',
          credentials: 'omit',
          headers: headers(session, file.type || 'application/octet-stream'),
          body: file,
        });
      } catch {
        return NETWORK;
      }
      if (!res.ok) return failure(res);
      const value = (await res.json().catch(() => undefined)) as { message?: Message; answer?: string } | undefined;
      return value?.message || typeof value?.answer === 'string'
        ? { ok: true, value }
        : { ...NETWORK, status: res.status };
    },

    /**
     * `POST /v1/widget/chat/stream`: calls `onFrame` for each frame as it arrives. Errors before the stream starts
     * are ordinary JSON answers (a Failure with their status). Once it started, a connection that breaks before the
     * end frame is code `interrupted`: the message was accepted, and its answer will be in the transcript.
     */
    async chatStream(
      session: Session,
      body: { message: string; escalate?: boolean; page_context?: string } & Identity,
      onFrame: (frame: StreamFrame) => void,
    ): Promise<Result<{ ended: boolean }>> {
      const res = await send('POST', '/v1/widget/chat/stream', {
        session,
        json: { session_id: session.session_id, ...body },
      });
      if (!(res instanceof Response)) return res;
      if (!res.ok) return failure(res);
      if (!res.body || !(res.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
        return { ok: false, status: res.status, code: 'error', message: 'The chat service sent no answer stream.' };
      }
      const { ended, broken } = await readFrames(res.body, onFrame);
      if (broken && !ended) {
        return { ...NETWORK, code: 'interrupted', message: 'The connection broke off during the answer.' };
      }
      return { ok: true, value: { ended } };
    },
  };
}
