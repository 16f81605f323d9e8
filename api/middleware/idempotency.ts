import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type { Db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { AppContext, AppMiddleware } from '../context';

/** Response headers worth replaying; the rest (dates, request id, rate headers) belong to the new request. */
const REPLAYED_HEADERS = ['content-type', 'retry-after'];

function storable(status: number): boolean {
  // Spec, Idempotency 5: error responses 5xx and 429 are not stored, so a retry runs again.
  return status < 500 && status !== 429;
}

/**
 * `Idempotency-Key` (spec, Idempotency): the first request runs and its response is stored for 24 hours, scoped to
 * the API key; a repeat replays it with `Idempotency-Replayed: true`. Claiming the key is one atomic insert, so
 * concurrent identical requests cannot both run: the losers see `idempotency_in_progress`. A streamed response
 * is recorded as it is sent and replayed whole.
 */
export function idempotency(db: Db): AppMiddleware {
  return async function idempotencyMiddleware(ctx, next) {
    const key = ctx.get('Idempotency-Key');
    if (!key) return next();
    if (key.length > LIMITS.idempotencyKeyChars) {
      throw new ApiError('bad_request', `Idempotency-Key: must be at most ${LIMITS.idempotencyKeyChars} characters`);
    }
    const apiKeyId = ctx.state.principal!.keyId;
    const hash = createHash('sha256')
      .update(`${ctx.method} ${ctx.path}\n`)
      .update(ctx.state.rawBody ?? Buffer.alloc(0))
      .digest();

    const claimed = await db.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_hash, state, expires_at)
       VALUES ($1, $2, $3, 'in_progress', now() + make_interval(hours => $4))
       ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, state = 'in_progress', created_at = now(), expires_at = EXCLUDED.expires_at,
             response_status = NULL, response_headers = NULL, response_body = NULL
       -- take over only a key whose record expired, or whose first attempt died with its process
       WHERE idempotency_keys.expires_at < now()
          OR (idempotency_keys.state = 'in_progress' AND idempotency_keys.created_at < now() - make_interval(secs => $5))
       RETURNING 1`,
      [apiKeyId, key, hash, LIMITS.idempotencyHours, LIMITS.idempotencyAbandonedAfterSeconds],
    );

    if (!claimed.rowCount) {
      const res = await db.query<{
        request_hash: Buffer;
        state: string;
        response_status: number;
        response_headers: Record<string, string>;
        response_body: Buffer;
      }>(
        `SELECT request_hash, state, response_status, response_headers, response_body
           FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2`,
        [apiKeyId, key],
      );
      const row = res.rows[0];
      if (!row) return idempotencyMiddleware(ctx, next); // removed in between (failed first attempt): claim again
      if (!row.request_hash.equals(hash)) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body');
      }
      if (row.state !== 'done') {
        throw new ApiError(
          'idempotency_in_progress',
          'The first request with this Idempotency-Key is still running; retry in about a second',
        );
      }
      ctx.status = row.response_status;
      for (const [name, value] of Object.entries(row.response_headers ?? {})) ctx.set(name, value);
      ctx.set('Idempotency-Replayed', 'true');
      ctx.body = row.response_body;
      return;
    }

    const release = () =>
      db.query(
        `DELETE FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2 AND state = 'in_progress'`,
        [apiKeyId, key],
      );
    const store = (status: number, body: Buffer) =>
      db.query(
        `UPDATE idempotency_keys SET state = 'done', response_status = $3, response_headers = $4, response_body = $5
          WHERE api_key_id = $1 AND idempotency_key = $2`,
        [apiKeyId, key, status, headersToReplay(ctx), body],
      );

    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError && storable(err.status)) {
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        ctx.type = 'application/json';
        await store(err.status, Buffer.from(JSON.stringify(err.toBody())));
      } else {
        await release().catch(() => undefined);
      }
      throw err;
    }

    if (!storable(ctx.status)) {
      await release();
      return;
    }
    const body = ctx.body;
    if (body instanceof Readable) {
      // Record the stream as it is sent; store it when it ends, release the key if it breaks.
      const chunks: Buffer[] = [];
      const tee = new PassThrough();
      tee.on('data', (c: Buffer | string) => chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c)));
      const status = ctx.status;
      body.on('error', () => void release().catch(() => undefined));
      tee.on('end', () => void store(status, Buffer.concat(chunks)).catch(() => release().catch(() => undefined)));
      body.pipe(tee);
      ctx.body = tee;
      return;
    }
    const serialized =
      body === undefined || body === null
        ? Buffer.alloc(0)
        : Buffer.isBuffer(body)
          ? body
          : typeof body === 'string'
            ? Buffer.from(body)
            : Buffer.from(JSON.stringify(body));
    if (body !== undefined && body !== null && !Buffer.isBuffer(body) && typeof body !== 'string')
      ctx.type = 'application/json';
    await store(ctx.status, serialized);
  };
}

function headersToReplay(ctx: AppContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) out[name] = String(value);
  }
  if (!out['content-type'] && ctx.body !== undefined) out['content-type'] = 'application/json; charset=utf-8';
  return out;
}
