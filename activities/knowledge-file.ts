import { Context } from '@temporalio/activity';
import type { Db } from '../lib/db';
import { type KnowledgeFiles, UploadSuperseded } from '../lib/knowledge/files';
import { UnreadableFile, readDocument } from '../lib/knowledge/formats/read';
import { renderDocument } from '../lib/knowledge/document';
import { type Embedder, UnknownBotError, upsertSource } from '../lib/knowledge/store';
import { LlmError } from '../lib/llm';
import { failure } from '../workflows/failures';
import {
  FILE_HEARTBEAT_MS,
  type KnowledgeFileInput,
  type KnowledgeFileResult,
} from '../workflows/contracts/knowledge-file';

export interface KnowledgeFileDeps {
  db: Db;
  /** The originals of file sources (their bytes in Postgres or the media bucket). */
  knowledgeFiles: KnowledgeFiles;
  embed?: Embedder;
}

export function createKnowledgeFileActivities(deps: KnowledgeFileDeps) {
  return {
    /**
     * Reads one upload from its kept original, splits it, embeds it when embeddings are on, and indexes it with its
     * source in one transaction (docs/decisions/145-documents-in.md). Beats on a timer while it works, so a dead worker is
     * noticed within the heartbeat timeout whatever step it was in. A file that cannot be read is recorded `failed`
     * with its reason and is the result, not an error: retrying the same bytes cannot help.
     */
    async readAndIndexFile(input: KnowledgeFileInput): Promise<KnowledgeFileResult> {
      const ctx = Context.current();
      let phase = 'reading';
      const beat = setInterval(() => ctx.heartbeat({ phase }), FILE_HEARTBEAT_MS);
      ctx.heartbeat({ phase });
      try {
        const upload = await deps.knowledgeFiles.toRead(input.uploadId);
        if (!upload) return { status: 'superseded' };
        let doc;
        try {
          doc = await readDocument(upload.bytes, upload.format);
        } catch (err) {
          if (!(err instanceof UnreadableFile)) throw err;
          await deps.knowledgeFiles.markFailed(input.uploadId, err.message);
          return { status: 'failed', reason: err.message };
        }
        phase = deps.embed ? 'embedding' : 'indexing';
        ctx.heartbeat({ phase });
        const { fragments } = await upsertSource(
          deps.db,
          {
            botId: upload.botId,
            sourceId: upload.sourceId,
            title: upload.title || doc.title || upload.name,
            text: renderDocument(doc),
            document: doc,
            origin: 'file',
          },
          {
            embed: deps.embed,
            // The upload must still be the source's when its passages are written, in the same transaction.
            inTransaction: (tx) => deps.knowledgeFiles.claim(tx, input.uploadId, doc.pages),
          },
        );
        return { status: 'indexed', passages: fragments, ...(doc.pages ? { pages: doc.pages } : {}) };
      } catch (err) {
        if (err instanceof UploadSuperseded) return { status: 'superseded' };
        if (err instanceof UnknownBotError) throw failure('bot_not_found', err.message);
        // The owner must act (a key or funds problem): retrying cannot help.
        if (err instanceof LlmError && err.kind === 'llm_unavailable') throw failure('llm_unavailable', err.message);
        throw err;
      } finally {
        clearInterval(beat);
      }
    },

    /** The reading gave up: the source says so (its passages, an earlier version's if any, are left as they are). */
    async markFileFailed(input: KnowledgeFileInput, reason: string): Promise<void> {
      await deps.knowledgeFiles.markFailed(input.uploadId, reason);
    },
  };
}

export type KnowledgeFileActivities = ReturnType<typeof createKnowledgeFileActivities>;
