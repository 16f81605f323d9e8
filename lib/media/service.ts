import { createHash } from 'node:crypto';
import { bindTo } from '../bind-deps';
import { type Db, type Queryable, withTransaction } from '../db';
import { ApiError } from '../errors';
import { randomToken } from '../keys';
import { LIMITS } from '../limits';
import { readImage } from './image';
import type { ObjectStore } from './s3';

/** What a message says of the image it holds (`messages.attachment`), and what the API shows of it with its `url`. */
export interface AttachmentRef {
  id: string;
  content_type: string;
  size: number;
  width?: number;
  height?: number;
}

export interface StoredMedia {
  contentType: string;
  size: number;
  etag: string;
  body: Buffer;
}

/** Media ids are the address of the file (`GET /media/{id}`, no key): 32 random base62 characters, ~190 bits. */
export function newMediaId(): string {
  return `med_${randomToken(32)}`;
}

const MEDIA_ID = /^med_[A-Za-z0-9]{32}$/;
const { media: M } = LIMITS;

/** The address of an attachment as clients fetch it. */
export function mediaUrl(baseUrl: string, id: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/media/${id}`;
}

/** What every media operation runs on (lib/services.ts builds it once). */
export interface MediaDeps {
  db: Db;
  bucket?: ObjectStore;
  /** Visitors' images are deleted this many days after they were sent (`expire`, run by maintenance). */
  retentionDays?: number;
}

const objectKey = (id: string) => `media/${id}`;

/** Deletes the bucket's objects of these media (rows are the caller's: they go with their conversation). */
async function deleteObjects(deps: MediaDeps, ids: string[]): Promise<void> {
  if (!deps.bucket) return;
  for (const id of ids) await deps.bucket.delete(objectKey(id));
}

/**
 * The upload quotas (LIMITS.media): images per conversation and bytes kept per workspace are 413
 * `payload_too_large` (no retry helps until something is deleted); a bot's bytes in 24 hours is 429 `rate_limited`
 * with `Retry-After` (when the oldest upload of the day leaves the window). Read in the transaction that inserts
 * the row, after `lockQuotas`.
 */
async function checkQuotas(tx: Queryable, botId: string, sessionId: string, size: number): Promise<void> {
  const res = await tx.query<{ in_conversation: number; bot_day: string; retry: number | null; stored: string }>(
    `SELECT (SELECT count(*)::int FROM media WHERE bot_id = $1 AND session_id = $2) AS in_conversation,
            (SELECT COALESCE(sum(size), 0) FROM media WHERE bot_id = $1 AND created_at > now() - interval '1 day')
              AS bot_day,
            (SELECT ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))::int FROM media
              WHERE bot_id = $1 AND created_at > now() - interval '1 day') AS retry,
            (SELECT COALESCE(sum(m.size), 0) FROM media m JOIN bots b ON b.id = m.bot_id
              WHERE b.workspace_id = (SELECT workspace_id FROM bots WHERE id = $1)) AS stored`,
    [botId, sessionId],
  );
  const q = res.rows[0];
  const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;
  if (q.in_conversation >= M.imagesPerConversation) {
    throw new ApiError('payload_too_large', `A conversation holds at most ${M.imagesPerConversation} images`, {
      quota: 'conversation_images',
    });
  }
  if (Number(q.stored) + size > M.workspaceBytesStored) {
    throw new ApiError(
      'payload_too_large',
      `This workspace keeps at most ${mib(M.workspaceBytesStored)} of images; older ones must go first`,
      { quota: 'workspace_bytes' },
    );
  }
  if (Number(q.bot_day) + size > M.botBytesPerDay) {
    const retry = String(Math.max(1, q.retry ?? 60));
    throw new ApiError(
      'rate_limited',
      `This agent takes at most ${mib(M.botBytesPerDay)} of images a day; retry after ${retry} s`,
      { quota: 'bot_bytes_per_day', retry_after: Number(retry) },
      { 'Retry-After': retry },
    );
  }
}

/**
 * Every quota counts the workspace's media (a conversation's and a bot's are within it): uploads of one workspace
 * check and insert one after another under this transaction-scoped lock, so uploads sent at the same instant never
 * pass a quota together. An advisory lock rather than the workspace's row, which chat turns update (credits).
 */
async function lockQuotas(tx: Queryable, botId: string): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(hashtextextended('media-quotas:' || workspace_id, 0)) FROM bots WHERE id = $1`,
    [botId],
  );
}

/**
 * Checks and stores one image of a conversation (lib/media/image.ts, readImage): 415 `unsupported_media_type` for
 * anything but PNG, JPEG, GIF or WebP (by the bytes), 413 `payload_too_large` past the size limit, 400
 * `bad_request` for an image whose size cannot be read or past the largest picture, and the quotas
 * (`checkQuotas`), which count the bytes stored. Returns what the message will hold.
 */
async function saveMedia(
  deps: MediaDeps,
  input: { botId: string; sessionId: string; bytes: Buffer },
): Promise<AttachmentRef> {
  if (input.bytes.length > LIMITS.widget.attachmentBytes) {
    throw new ApiError('payload_too_large', `Images may be at most ${LIMITS.widget.attachmentBytes / 1024 / 1024} MiB`);
  }
  const image = await readImage(input.bytes);
  const id = newMediaId();
  const ref: AttachmentRef = {
    id,
    content_type: image.contentType,
    size: image.bytes.length,
    width: image.width,
    height: image.height,
  };
  // In a bucket first: a row never points at an object that is not there. Refused by a quota, it is removed.
  if (deps.bucket) await deps.bucket.put(objectKey(id), image.bytes, image.contentType);
  try {
    await withTransaction(deps.db, async (tx) => {
      await lockQuotas(tx, input.botId);
      await checkQuotas(tx, input.botId, input.sessionId, image.bytes.length);
      await tx.query(
        `INSERT INTO media (id, bot_id, session_id, content_type, size, width, height, sha256, store, data)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          id,
          input.botId,
          input.sessionId,
          image.contentType,
          image.bytes.length,
          image.width,
          image.height,
          createHash('sha256').update(image.bytes).digest(),
          deps.bucket ? 's3' : 'postgres',
          deps.bucket ? null : image.bytes,
        ],
      );
    });
  } catch (err) {
    await deleteObjects(deps, [id]).catch(() => undefined);
    throw err;
  }
  return ref;
}

/** One stored file, or null when there is none (unknown, malformed or erased id). */
async function readMedia(deps: MediaDeps, id: string): Promise<StoredMedia | null> {
  if (!MEDIA_ID.test(id)) return null;
  const res = await deps.db.query<{
    content_type: string;
    size: number;
    sha256: Buffer;
    store: 'postgres' | 's3';
    data: Buffer | null;
  }>(`SELECT content_type, size, sha256, store, data FROM media WHERE id = $1`, [id]);
  const row = res.rows[0];
  if (!row) return null;
  const body = row.store === 'postgres' ? row.data : ((await deps.bucket?.get(objectKey(id))) ?? null);
  if (!body) return null;
  return {
    contentType: row.content_type,
    size: row.size,
    etag: `"${row.sha256.toString('base64url').slice(0, 27)}"`,
    body,
  };
}

/** Deletes an attachment whose message could not be written (the rest of a failed upload). */
async function discardMedia(deps: MediaDeps, id: string): Promise<void> {
  await deleteObjects(deps, [id]);
  await deps.db.query(`DELETE FROM media WHERE id = $1`, [id]);
}

/**
 * Before conversations are deleted (a visitor erased): their files leave the bucket; the rows go with the
 * conversations' own rows (foreign key), in the caller's transaction.
 */
async function deleteForSessions(deps: MediaDeps, botId: string, sessionIds: string[]): Promise<void> {
  if (!sessionIds.length) return;
  const res = await deps.db.query<{ id: string }>(`SELECT id FROM media WHERE bot_id = $1 AND session_id = ANY($2)`, [
    botId,
    sessionIds,
  ]);
  await deleteObjects(
    deps,
    res.rows.map((r) => r.id),
  );
}

/**
 * Deletes visitors' images older than the retention (MEDIA_RETENTION_DAYS), oldest first, a batch at a time: the
 * bucket's objects, then the rows. Their messages stay in the transcript; the address answers 404 from then on.
 * Returns how many were deleted. Run by the maintenance schedule.
 */
async function expireMedia(deps: MediaDeps): Promise<number> {
  if (!deps.retentionDays) return 0;
  const res = await deps.db.query<{ id: string }>(
    `SELECT id FROM media WHERE created_at < now() - make_interval(days => $1) ORDER BY created_at LIMIT $2`,
    [deps.retentionDays, M.retentionBatch],
  );
  const ids = res.rows.map((r) => r.id);
  if (!ids.length) return 0;
  await deleteObjects(deps, ids);
  const gone = await deps.db.query(`DELETE FROM media WHERE id = ANY($1)`, [ids]);
  return gone.rowCount ?? 0;
}

/** Before a bot is deleted: its files leave the bucket (rows go with the bot). */
async function deleteForBot(deps: MediaDeps, botId: string): Promise<void> {
  const res = await deps.db.query<{ id: string }>(`SELECT id FROM media WHERE bot_id = $1`, [botId]);
  await deleteObjects(
    deps,
    res.rows.map((r) => r.id),
  );
}

/**
 * Images visitors attach (docs/widget.md): checked from their bytes, stored durably — in Postgres by default, or in
 * an S3-compatible bucket (`MEDIA_STORE=s3`) — and served at their unguessable address. Rows belong to a conversation
 * and go with it; objects in a bucket are deleted here, before their rows.
 */
export function createMediaService(deps: MediaDeps) {
  const bound = bindTo(deps);
  return {
    save: bound(saveMedia),
    read: bound(readMedia),
    discard: bound(discardMedia),
    deleteForSessions: bound(deleteForSessions),
    expire: bound(expireMedia),
    deleteForBot: bound(deleteForBot),
  };
}

export type MediaService = ReturnType<typeof createMediaService>;
