import { createHash } from 'node:crypto';
import { bindTo } from '../bind-deps';
import { withTransaction, type Db, type DbClient } from '../db';
import { newId } from '../ids';
import type { ObjectStore } from '../media/s3';
import type { FileFormat } from './formats/sniff';

/**
 * The originals of file sources (docs/decisions/145-documents-in.md): one row per source in `knowledge_files`, its bytes
 * in the row (the default) or in the media bucket (MEDIA_STORE=s3, key `knowledge/{upload id}`). Each upload gets a
 * new upload id; the reading of an upload writes its passages only while its id is still the source's (`claim`), so a
 * reading that a newer upload overtook writes nothing.
 */

export interface AcceptedUpload {
  uploadId: string;
  sourceId: string;
  /** An earlier upload of this source (replaced). */
  replaced: boolean;
}

export interface UploadToRead {
  botId: string;
  sourceId: string;
  name: string;
  title: string | null;
  format: FileFormat;
  bytes: Buffer;
}

export interface StoredFile {
  name: string;
  contentType: string;
  size: number;
  sha256: Buffer;
  body: Buffer;
}

/** The reading's upload is no longer the source's (a newer upload replaced it, or the source was deleted). */
export class UploadSuperseded extends Error {
  constructor(uploadId: string) {
    super(`Upload ${uploadId} is no longer the current one of its source`);
    this.name = 'UploadSuperseded';
  }
}

/** What the originals are kept in: their rows, and the media bucket when MEDIA_STORE=s3. */
export interface KnowledgeFilesDeps {
  db: Db;
  bucket?: ObjectStore;
}

const objectKey = (uploadId: string) => `knowledge/${uploadId}`;

async function deleteObjects(deps: KnowledgeFilesDeps, uploadIds: string[]): Promise<void> {
  if (!deps.bucket) return;
  for (const id of uploadIds) await deps.bucket.delete(objectKey(id));
}

/**
 * Keeps an upload as its source's original and marks the source `reading` (creating it when new). The source is
 * the one named, else the bot's file of the same name (an upload of the same name replaces it), else a new one.
 * The previous version's passages stay searchable until the new reading's index write replaces them.
 */
async function acceptUpload(
  deps: KnowledgeFilesDeps,
  input: {
    botId: string;
    sourceId?: string;
    title?: string;
    name: string;
    format: FileFormat;
    contentType: string;
    bytes: Buffer;
  },
): Promise<AcceptedUpload> {
  const uploadId = newId('upl');
  // In the bucket first: a row never points at an object that is not there.
  if (deps.bucket) await deps.bucket.put(objectKey(uploadId), input.bytes, input.contentType);
  const sha256 = createHash('sha256').update(input.bytes).digest();
  const accepted = await withTransaction(deps.db, async (tx) => {
    let sourceId = input.sourceId;
    if (!sourceId) {
      const same = await tx.query<{ source_id: string }>(
        `SELECT source_id FROM knowledge_files WHERE bot_id = $1 AND name = $2 ORDER BY uploaded_at DESC LIMIT 1`,
        [input.botId, input.name],
      );
      sourceId = same.rows[0]?.source_id ?? newId('src');
    }
    // A new source starts empty (no passages, nothing to skip as unchanged); an existing one keeps its passages.
    await tx.query(
      `INSERT INTO knowledge_sources (bot_id, source_id, title, text, origin, content_hash, fragment_count, status)
       VALUES ($1, $2, $3, '', 'file', ''::bytea, 0, 'reading')
       ON CONFLICT (bot_id, source_id) DO UPDATE SET origin = 'file', url = NULL, status = 'reading', reason = NULL,
         updated_at = now()`,
      [input.botId, sourceId, input.title?.trim() || input.name],
    );
    const previous = await tx.query<{ upload_id: string }>(
      `SELECT upload_id FROM knowledge_files WHERE bot_id = $1 AND source_id = $2 FOR UPDATE`,
      [input.botId, sourceId],
    );
    await tx.query(
      `INSERT INTO knowledge_files (bot_id, source_id, upload_id, name, title, format, content_type, size, sha256,
                                    store, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (bot_id, source_id) DO UPDATE
         SET upload_id = EXCLUDED.upload_id, name = EXCLUDED.name, title = EXCLUDED.title, format = EXCLUDED.format,
             content_type = EXCLUDED.content_type, size = EXCLUDED.size, sha256 = EXCLUDED.sha256, pages = NULL,
             store = EXCLUDED.store, data = EXCLUDED.data, uploaded_at = now()`,
      [
        input.botId,
        sourceId,
        uploadId,
        input.name,
        input.title?.trim() || null,
        input.format,
        input.contentType,
        input.bytes.length,
        sha256,
        deps.bucket ? 's3' : 'postgres',
        deps.bucket ? null : input.bytes,
      ],
    );
    return { sourceId, previous: previous.rows[0]?.upload_id };
  });
  // The replaced original leaves the bucket once nothing points at it.
  if (accepted.previous) await deleteObjects(deps, [accepted.previous]).catch(() => undefined);
  return { uploadId, sourceId: accepted.sourceId, replaced: Boolean(accepted.previous) };
}

/** The upload to read, or null when it is no longer its source's (replaced, or the source deleted). */
async function uploadToRead(deps: KnowledgeFilesDeps, uploadId: string): Promise<UploadToRead | null> {
  const res = await deps.db.query<{
    bot_id: string;
    source_id: string;
    name: string;
    title: string | null;
    format: FileFormat;
    store: 'postgres' | 's3';
    data: Buffer | null;
  }>(`SELECT bot_id, source_id, name, title, format, store, data FROM knowledge_files WHERE upload_id = $1`, [
    uploadId,
  ]);
  const row = res.rows[0];
  if (!row) return null;
  const bytes = row.store === 'postgres' ? row.data : await deps.bucket?.get(objectKey(uploadId));
  if (!bytes) throw new Error(`The original of upload ${uploadId} is missing from the ${row.store} store`);
  return {
    botId: row.bot_id,
    sourceId: row.source_id,
    name: row.name,
    title: row.title,
    format: row.format,
    bytes,
  };
}

/**
 * Inside the index write's transaction: locks the upload's row and records its page count; throws
 * `UploadSuperseded` when the upload is no longer its source's, so nothing is written.
 */
async function claimUpload(tx: DbClient, uploadId: string, pages: number | undefined): Promise<void> {
  const res = await tx.query(`UPDATE knowledge_files SET pages = $2 WHERE upload_id = $1`, [uploadId, pages ?? null]);
  if (!res.rowCount) throw new UploadSuperseded(uploadId);
}

/** A reading that failed: the source says why; its passages (an earlier version's, if any) are left as they are. */
async function markFailed(deps: KnowledgeFilesDeps, uploadId: string, reason: string): Promise<boolean> {
  const res = await deps.db.query(
    `UPDATE knowledge_sources s SET status = 'failed', reason = $2, updated_at = now()
       FROM knowledge_files f
      WHERE f.upload_id = $1 AND s.bot_id = f.bot_id AND s.source_id = f.source_id`,
    [uploadId, reason],
  );
  return Boolean(res.rowCount);
}

/** A source's original, for download; null when the source is not a file (or not the bot's). */
async function readOriginal(deps: KnowledgeFilesDeps, botId: string, sourceId: string): Promise<StoredFile | null> {
  const res = await deps.db.query<{
    upload_id: string;
    name: string;
    content_type: string;
    size: number;
    sha256: Buffer;
    store: 'postgres' | 's3';
    data: Buffer | null;
  }>(
    `SELECT upload_id, name, content_type, size, sha256, store, data FROM knowledge_files
      WHERE bot_id = $1 AND source_id = $2`,
    [botId, sourceId],
  );
  const row = res.rows[0];
  if (!row) return null;
  const body = row.store === 'postgres' ? row.data : await deps.bucket?.get(objectKey(row.upload_id));
  if (!body) return null;
  return { name: row.name, contentType: row.content_type, size: row.size, sha256: row.sha256, body };
}

/** Before a source is deleted: its original leaves the bucket (the row goes with the source). */
async function deleteForSource(deps: KnowledgeFilesDeps, botId: string, sourceId: string): Promise<void> {
  const res = await deps.db.query<{ upload_id: string }>(
    `SELECT upload_id FROM knowledge_files WHERE bot_id = $1 AND source_id = $2`,
    [botId, sourceId],
  );
  await deleteObjects(
    deps,
    res.rows.map((r) => r.upload_id),
  );
}

/** Before a bot is deleted: its originals leave the bucket (rows go with the bot's sources). */
async function deleteForBot(deps: KnowledgeFilesDeps, botId: string): Promise<void> {
  const res = await deps.db.query<{ upload_id: string }>(`SELECT upload_id FROM knowledge_files WHERE bot_id = $1`, [
    botId,
  ]);
  await deleteObjects(
    deps,
    res.rows.map((r) => r.upload_id),
  );
}

/** The originals as the knowledge service and the reading activity use them: the operations above, given their deps. */
export function createKnowledgeFiles(deps: KnowledgeFilesDeps) {
  const bound = bindTo(deps);
  return {
    accept: bound(acceptUpload),
    toRead: bound(uploadToRead),
    claim: claimUpload,
    markFailed: bound(markFailed),
    read: bound(readOriginal),
    deleteForSource: bound(deleteForSource),
    deleteForBot: bound(deleteForBot),
  };
}

export type KnowledgeFiles = ReturnType<typeof createKnowledgeFiles>;
