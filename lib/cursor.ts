import { ApiError } from './errors';

/**
 * Opaque cursors (spec, Pagination: never parsed or constructed by clients). Encoded, versioned JSON; a cursor
 * that does not decode is 400 `bad_request` rather than a silent restart from the beginning.
 */
export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...value })).toString('base64url');
}

export function decodeCursor<T extends Record<string, string | number>>(cursor: string, keys: (keyof T)[]): T {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (parsed?.v === 1 && keys.every((k) => ['string', 'number'].includes(typeof parsed[k]))) return parsed as T;
  } catch {
    // fall through
  }
  throw new ApiError('bad_request', 'cursor: not a cursor returned by this API');
}
