/**
 * The dashboard's calls to the API, on the page's own origin with the session cookie. Errors are `{error, code}`
 * (spec, Errors); the pages branch on the status and `code`, and show `error` when nothing better is known.
 */

export interface SignedIn {
  user: { id: string; email: string; role: 'owner' | 'member' };
  workspace: { id: string; name: string };
}

export interface Pairing {
  code: string;
  device: string;
  status: 'pending' | 'approved' | 'collected';
  expires_at: number;
}

export type Result<T> =
  { ok: true; value: T } | { ok: false; status: number; code: string; message: string; retryAfter?: number };

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Result<T>> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return { ok: false, status: 0, code: 'network', message: 'The service cannot be reached. Check your connection.' };
  }
  const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (res.ok) return { ok: true, value: json as T };
  const retryAfter = Number(res.headers.get('Retry-After')) || undefined;
  return {
    ok: false,
    status: res.status,
    code: typeof json?.code === 'string' ? json.code : 'error',
    message: typeof json?.error === 'string' ? json.error : `The service answered ${res.status}.`,
    retryAfter,
  };
}

export const api = {
  me: () => call<SignedIn>('GET', '/v1/auth/me'),
  login: (email: string, password: string) => call<unknown>('POST', '/v1/auth/login', { email, password }),
  logout: () => call<unknown>('POST', '/v1/auth/logout'),
  pairing: (code: string) => call<Pairing>('GET', `/v1/dashboard/mcp-pair/${encodeURIComponent(code)}`),
  approve: (code: string) => call<Pairing>('POST', `/v1/dashboard/mcp-pair/${encodeURIComponent(code)}/approve`),
};
