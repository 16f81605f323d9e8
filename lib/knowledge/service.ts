import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { LIMITS } from '../limits';
import type { ObjectStore } from '../media/s3';
import type { Temporal } from '../temporal';
import {
  type KnowledgeFileInput,
  knowledgeFileSearchAttributes,
  knowledgeFileWorkflowId,
} from '../../workflows/contracts/knowledge-file';
import { knowledgeFileWorkflow } from '../../workflows/knowledge-file';
import { createKnowledgeFiles } from './files';
import { type FileFormat, sniffFile } from './formats/sniff';
import { type PassageView, passageView, retrievePassages } from './retrieve';
import {
  type Embedder,
  type Source,
  type SourceKind,
  type SourceOrder,
  type SourceSummary,
  type StoredPassage,
  deleteSource,
  getSource,
  listSources,
  sourcePassages,
  upsertSource,
} from './store';

export interface KnowledgeServiceDeps {
  db: Db;
  /** Starts the reading of uploaded files (a workflow per file). */
  temporal: Temporal;
  /** Embeds fragments on write when embeddings are on; absent, indexing is full text only. */
  embed?: Embedder;
  /** Where originals of uploaded files are kept when MEDIA_STORE=s3; absent, in Postgres. */
  bucket?: ObjectStore;
}

/** What an upload's answer says (202): the source is being read; follow it with `GET /v1/api/knowledge/{id}`. */
export interface FileAccepted {
  status: 'reading';
  source_id: string;
  name: string;
  format: FileFormat;
  content_type: string;
  size: number;
  /** An earlier upload of this source was replaced (the same `source_id`, or the same file name). */
  replaced: boolean;
}

/** A file's name as kept: its last path segment, without control characters, at most 255 characters. */
function cleanName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\x00-\x1f\x7f]/g, '').trim();
  return (clean || 'upload').slice(0, LIMITS.knowledgeFiles.nameChars);
}

/**
 * The knowledge base (contract, Endpoints → Knowledge base): every surface that writes, lists, reads or deletes a source
 * calls these; the SQL and chunking live in ./store (shared with the site scan's indexing).
 */
export function createKnowledgeService(deps: KnowledgeServiceDeps) {
  const files = createKnowledgeFiles({ db: deps.db, bucket: deps.bucket });
  return {
    /** The originals of file sources (the reading workflow's activity uses them too). */
    files,

    /**
     * Takes an uploaded file into the bot's knowledge (docs/decisions/145-documents-in.md): judged by its bytes (415
     * `unsupported_media_type` with the reason for what is not a document), kept as the source's original, and read
     * by a workflow of its own. Answers at once: the source is `reading` until the workflow indexes it or says why
     * it could not. The same `source_id`, or else the same file name, replaces that source.
     */
    async uploadFile(
      bot: { botId: string; workspaceId: string },
      input: { name: string; declaredType: string; bytes: Buffer; source_id?: string; title?: string },
    ): Promise<FileAccepted> {
      if (input.bytes.length > LIMITS.knowledgeFiles.bytes) {
        throw new ApiError(
          'payload_too_large',
          `Files may be at most ${LIMITS.knowledgeFiles.bytes / 1024 / 1024} MiB; this one is ${Math.ceil(input.bytes.length / 1024 / 1024)} MiB`,
        );
      }
      const name = cleanName(input.name);
      const sniffed = await sniffFile(input.bytes, { name, declaredType: input.declaredType });
      if ('refused' in sniffed) throw new ApiError('unsupported_media_type', sniffed.refused);
      const accepted = await files.accept({
        botId: bot.botId,
        sourceId: input.source_id,
        title: input.title,
        name,
        format: sniffed.format,
        contentType: sniffed.contentType,
        bytes: input.bytes,
      });
      const workflowInput: KnowledgeFileInput = {
        botId: bot.botId,
        workspaceId: bot.workspaceId,
        sourceId: accepted.sourceId,
        uploadId: accepted.uploadId,
      };
      try {
        await deps.temporal.client.workflow.start(knowledgeFileWorkflow, {
          workflowId: knowledgeFileWorkflowId(bot.botId, accepted.sourceId),
          taskQueue: deps.temporal.taskQueue,
          args: [workflowInput],
          // A new upload of the source replaces a reading still running: its index write would find its upload
          // gone anyway (lib/knowledge/files.ts, `claim`), this stops its work too.
          workflowIdConflictPolicy: 'TERMINATE_EXISTING',
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          searchAttributes: knowledgeFileSearchAttributes(workflowInput),
        });
      } catch (err) {
        // Not read, and no reading will come: the source must not stay `reading`.
        await files
          .markFailed(accepted.uploadId, 'The reading could not be started: upload the file again')
          .catch(() => undefined);
        throw err;
      }
      return {
        status: 'reading',
        source_id: accepted.sourceId,
        name,
        format: sniffed.format,
        content_type: sniffed.contentType,
        size: input.bytes.length,
        replaced: accepted.replaced,
      };
    },

    /** A file source's original, as uploaded; 404 when the source is not a file of the bot. */
    async download(botId: string, sourceId: string) {
      const file = await files.read(botId, sourceId);
      if (!file) throw errors.notFound('No file source with this id');
      return file;
    },

    /** Adds a source, or replaces the one with the same `source_id`; searchable when this returns. */
    async write(
      botId: string,
      input: { source_id?: string; title?: string; text: string },
    ): Promise<{ status: 'indexed'; source_id: string }> {
      const { sourceId } = await upsertSource(
        deps.db,
        { botId, sourceId: input.source_id, title: input.title, text: input.text, origin: 'api' },
        { embed: deps.embed },
      );
      return { status: 'indexed', source_id: sourceId };
    },

    /** A source of the bot whose text is exactly this one, if any (the builder does not add a text twice). */
    async findByText(botId: string, text: string): Promise<string | null> {
      const res = await deps.db.query<{ source_id: string }>(
        `SELECT source_id FROM knowledge_sources WHERE bot_id = $1 AND text = $2 LIMIT 1`,
        [botId, text],
      );
      return res.rows[0]?.source_id ?? null;
    },

    /**
     * Oldest first unless asked (the public list's order, contract, Knowledge base); `q` filters by title, id or the
     * words of the text, `kind` by kind.
     */
    list(
      botId: string,
      page: { limit: number; cursor?: string; q?: string; order?: SourceOrder; kind?: SourceKind },
    ): Promise<{ sources: SourceSummary[]; next_cursor: string }> {
      return listSources(deps.db, botId, page);
    },

    /**
     * What a question retrieves (docs/decisions/153-see-what-the-agent-reads.md): the passages a chat turn asking it alone
     * would give the model, best first, by the turn's own retrieval (full text, fused with the question's embedding
     * when embeddings are on; a failed embedding leaves full text alone, as a turn does). Only this bot's passages.
     */
    async search(botId: string, input: { query: string; limit: number }): Promise<{ passages: PassageView[] }> {
      let queryEmbedding: number[] | undefined;
      if (deps.embed) {
        try {
          [queryEmbedding] = await deps.embed([input.query]);
        } catch {
          // Full-text retrieval alone still answers, as it does for a chat turn.
        }
      }
      const passages = await retrievePassages(deps.db, botId, input.query, { limit: input.limit, queryEmbedding });
      return { passages: passages.map(passageView) };
    },

    /** A source in full; with `passages`, also its passages with their heading paths and pages. */
    async get(
      botId: string,
      sourceId: string,
      opts: { passages?: boolean } = {},
    ): Promise<Source & { passages?: StoredPassage[] }> {
      const source = await getSource(deps.db, botId, sourceId);
      if (!source) throw errors.notFound('No knowledge source with this id');
      if (!opts.passages) return source;
      return { ...source, passages: await sourcePassages(deps.db, botId, sourceId) };
    },

    async remove(botId: string, sourceId: string): Promise<{ status: 'deleted'; source_id: string }> {
      // An original in the bucket goes first; its row goes with the source.
      await files.deleteForSource(botId, sourceId);
      if (!(await deleteSource(deps.db, botId, sourceId))) throw errors.notFound('No knowledge source with this id');
      return { status: 'deleted', source_id: sourceId };
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
