import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { AppContext, AppMiddleware, StreamTap } from '../context';

/** Response headers worth replaying; the rest (dates, request id, rate headers) belong to the new request. */
const REPLAYED_HEADERS = ['content-type', 'retry-after'];

function storable(status: number): boolean {
  // Spec, Idempotency 5: error responses 5xx and 429 are not stored, so a retry runs again.
  return status < 500 && status !== 429;
}

/**
 * The owner of an `in_progress` key renews a lease on it every `renewSeconds` while it runs; a key whose lease has
 * lapsed is taken to have died with its process and may be taken over. Turns take their ids from the key, so even a
 * takeover joins the same turn instead of starting a second one.
 */
export interface IdempotencyLease {
  leaseSeconds: number;
  renewSeconds: number;
}

/** Longer than any request runs (a turn's budget is at most minutes): past it the lease is no longer renewed. */
const MAX_OWNED_MS = 15 * 60_000;

const DEFAULT_LEASE: IdempotencyLease = {
  leaseSeconds: LIMITS.idempotencyLeaseSeconds,
  renewSeconds: LIMITS.idempotencyLeaseSeconds / 3,
};

/** The request's `Idempotency-Key`, if it sent one; 400 when it is longer than a key may be. */
export function idempotencyKeyOf(ctx: { get(field: string): string }): string | undefined {
  const key = ctx.get('Idempotency-Key');
  if (!key) return undefined;
  if (key.length > LIMITS.idempotencyKeyChars) {
    throw new ApiError('bad_request', `Idempotency-Key: must be at most ${LIMITS.idempotencyKeyChars} characters`);
  }
  return key;
}

/**
 * `Idempotency-Key` (contract, Idempotency): the first request runs and its response is stored for 24 hours, scoped to
 * the API key; a repeat replays it with `Idempotency-Replayed: true`. Claiming the key is one atomic statement, so
 * concurrent identical requests cannot both run: the losers see `idempotency_in_progress`. A streamed response is
 * recorded from its source as it is produced and replayed whole.
 *
 * Chat turns take their ids from the key (`ctx.state.idempotencyScope`), so a retry of a turn that is still running
 * — the API stopped waiting, or the first attempt's process died — is the same Temporal update and joins it instead
 * of running a second turn. A key whose attempt failed (5xx, 429, an error frame) is open again for a retry, and
 * unless the failed turn may still be running, under a new generation: that retry runs anew (contract, Idempotency 5).
 */
export function idempotency(db: Db, lease: IdempotencyLease = DEFAULT_LEASE): AppMiddleware {
  return async function idempotencyMiddleware(ctx, next) {
    const key = idempotencyKeyOf(ctx);
    if (!key) return next();
    const held: HeldKey = { db, apiKeyId: ctx.state.principal!.keyId, key, lease };
    const hash = requestHash(ctx);

    const generation = await claim(held, hash);
    if (generation === null) {
      if (await answerFromRecord(held, hash, ctx)) return;
      return idempotencyMiddleware(ctx, next); // opened in between: claim again
    }

    // What the request is across its retries (and this generation of them): chat turns derive their ids from it.
    ctx.state.idempotencyScope = createHash('sha256')
      .update(`${held.apiKeyId}\n${key}\n${generation}`)
      .digest('base64url');
    const record = own(held, ctx);
    recordStream(ctx, record);

    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError && err.turnPending) ctx.state.turnPending = true;
      if (err instanceof ApiError && storable(err.status)) {
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        ctx.type = 'application/json';
        await record.store(err.status, Buffer.from(JSON.stringify(err.toBody())));
      } else {
        await record.release().catch(() => undefined);
      }
      throw err;
    }

    if (!storable(ctx.status)) {
      await record.release();
      return;
    }
    if (ctx.state.streamed) return; // stored by the tap when the stream ends
    const body = ctx.body;
    if (body instanceof Readable) {
      // No route answers another kind of stream; storing one would need it whole, so it is not stored.
      await record.release();
      return;
    }
    await record.store(ctx.status, serialize(ctx, body));
  };
}

/** One API key's one `Idempotency-Key`, as this request holds it. */
interface HeldKey {
  db: Db;
  apiKeyId: string;
  key: string;
  lease: IdempotencyLease;
}

/** What the key promises is the same request again: its method, path and body. */
function requestHash(ctx: AppContext): Buffer {
  return (
    createHash('sha256')
      .update(`${ctx.method} ${ctx.path}\n`)
      // A multipart body is identified by its fields and file, not its random boundary (api/middleware/multipart.ts).
      .update(ctx.state.bodyDigest ?? ctx.state.rawBody ?? Buffer.alloc(0))
      .digest()
  );
}

/** Claims the key in one atomic statement: its generation, or null when another request holds it or it is done. */
async function claim({ db, apiKeyId, key, lease }: HeldKey, hash: Buffer): Promise<number | null> {
  const claimed = await db.query<{ generation: number }>(
    `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_hash, state, expires_at, lease_until)
     VALUES ($1, $2, $3, 'in_progress', now() + make_interval(hours => $4), now() + make_interval(secs => $5))
     ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, state = 'in_progress', created_at = now(), expires_at = EXCLUDED.expires_at,
           lease_until = EXCLUDED.lease_until, response_status = NULL, response_headers = NULL, response_body = NULL,
           generation = CASE WHEN idempotency_keys.expires_at < now() THEN 0 ELSE idempotency_keys.generation END
     -- take over a key that is open again (its attempt failed), expired, or whose owner stopped renewing its lease
     WHERE idempotency_keys.state = 'open'
        OR idempotency_keys.expires_at < now()
        OR (idempotency_keys.state = 'in_progress' AND COALESCE(idempotency_keys.lease_until, idempotency_keys.created_at) < now())
     RETURNING generation`,
    [apiKeyId, key, hash, LIMITS.idempotencyHours, lease.leaseSeconds],
  );
  return claimed.rowCount ? claimed.rows[0].generation : null;
}

/**
 * A key this request could not claim: the stored response is replayed (true), or 409 `idempotency_key_reused` for
 * another body, or 409 `idempotency_in_progress` while its first request runs. False when the key was opened again
 * in between (a failed attempt released it): the caller claims again.
 */
async function answerFromRecord(
  { db, apiKeyId, key, lease }: HeldKey,
  hash: Buffer,
  ctx: AppContext,
): Promise<boolean> {
  const res = await db.query<{
    request_hash: Buffer;
    state: string;
    response_status: number;
    response_headers: Record<string, string>;
    response_body: Buffer;
    lease_left: number;
  }>(
    `SELECT request_hash, state, response_status, response_headers, response_body,
            EXTRACT(EPOCH FROM lease_until - now())::float8 AS lease_left
       FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2`,
    [apiKeyId, key],
  );
  const row = res.rows[0];
  if (!row || row.state === 'open') return false;
  if (!row.request_hash.equals(hash)) {
    throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body');
  }
  if (row.state !== 'done') {
    const wait = retryAfterInProgress(row.lease_left, lease);
    throw new ApiError(
      'idempotency_in_progress',
      `The first request with this Idempotency-Key is still running; retry in ${wait} second${wait === 1 ? '' : 's'}`,
      {},
      { 'Retry-After': String(wait) },
    );
  }
  ctx.status = row.response_status;
  for (const [name, value] of Object.entries(row.response_headers ?? {})) ctx.set(name, value);
  ctx.set('Idempotency-Replayed', 'true');
  ctx.body = row.response_body;
  return true;
}

/**
 * The claimed key while this request owns it. The lease says this process is alive and still working on the key; it
 * ends with the response (or the stream), and in any case after the longest a request can run, so a response path
 * that forgot to end it cannot hold the key forever.
 */
function own({ db, apiKeyId, key, lease }: HeldKey, ctx: AppContext) {
  const ownedUntil = Date.now() + MAX_OWNED_MS;
  const renewal = setInterval(() => {
    if (Date.now() > ownedUntil) return clearInterval(renewal);
    // Only a live lease is renewed: one that lapsed (this process stalled, or Postgres was away) is lost, and a
    // retry may take the key over — it joins the same turn, so losing it costs nothing but makes takeover certain.
    db.query(
      `UPDATE idempotency_keys SET lease_until = now() + make_interval(secs => $3)
        WHERE api_key_id = $1 AND idempotency_key = $2 AND state = 'in_progress' AND lease_until > now()`,
      [apiKeyId, key, lease.leaseSeconds],
    ).catch(() => undefined); // a missed renewal at worst lets a retry join the same turn
  }, lease.renewSeconds * 1000);
  renewal.unref();
  const endLease = () => clearInterval(renewal);

  /** Opens the key again; a new generation unless the failed attempt's turn may still be running (it is joined). */
  const release = () => {
    endLease();
    return db.query(
      `UPDATE idempotency_keys SET state = 'open', generation = generation + CASE WHEN $3 THEN 0 ELSE 1 END
        WHERE api_key_id = $1 AND idempotency_key = $2 AND state = 'in_progress'`,
      [apiKeyId, key, ctx.state.turnPending === true],
    );
  };
  const store = (status: number, body: Buffer) => {
    endLease();
    return db.query(
      `UPDATE idempotency_keys SET state = 'done', response_status = $3, response_headers = $4, response_body = $5,
              session_id = $6
        WHERE api_key_id = $1 AND idempotency_key = $2`,
      [apiKeyId, key, status, headersToReplay(ctx), body, ctx.state.sessionId ?? null],
    );
  };

  return { release, store };
}

/**
 * An event stream is recorded as it is produced, not from what reaches the client: a client that disconnects
 * does not stop the turn, and the complete stream is stored when it ends (a retry meanwhile is
 * `idempotency_in_progress`, then a replay). A stream that carried an error frame is released instead: like a
 * 5xx, it is not a result.
 */
function recordStream(ctx: AppContext, { release, store }: ReturnType<typeof own>): void {
  const chunks: Buffer[] = [];
  const tap: StreamTap = {
    data: (chunk) => chunks.push(chunk),
    end: async () => {
      const done = ctx.state.replayable === false ? release() : store(ctx.status, Buffer.concat(chunks));
      await done.then(
        () => undefined,
        () => release().catch(() => undefined),
      );
    },
  };
  ctx.state.streamTaps = [...(ctx.state.streamTaps ?? []), tap];
}

/** The response body as stored: a JSON body is serialized (and said to be JSON), bytes and text as they are. */
function serialize(ctx: AppContext, body: unknown): Buffer {
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
  return serialized;
}

/**
 * How long a request that found the key `in_progress` should wait. While the owner renews its lease, its answer may
 * come any moment: a second. Once it has missed a renewal it has probably died: the time until the lease lapses and
 * the key can be taken over.
 */
export function retryAfterInProgress(leaseLeft: number | null, lease: IdempotencyLease): number {
  if (leaseLeft === null || leaseLeft <= 0) return 1;
  const sinceRenewal = lease.leaseSeconds - leaseLeft;
  if (sinceRenewal <= lease.renewSeconds + 1) return 1;
  return Math.max(1, Math.ceil(leaseLeft));
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
