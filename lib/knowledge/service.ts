import type { Db } from '../db';
import { errors } from '../errors';
import {
  type Embedder,
  type Source,
  type SourceOrder,
  type SourceSummary,
  deleteSource,
  getSource,
  listSources,
  upsertSource,
} from './store';

export interface KnowledgeServiceDeps {
  db: Db;
  /** Embeds fragments on write when embeddings are on; absent, indexing is full text only. */
  embed?: Embedder;
}

/**
 * The knowledge base (spec, Endpoints → Knowledge base): every surface that writes, lists, reads or deletes a source
 * calls these; the SQL and chunking live in ./store (shared with the site scan's indexing).
 */
export function createKnowledgeService(deps: KnowledgeServiceDeps) {
  return {
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

    /** Oldest first unless asked (the public list's order, spec: Knowledge base); `q` filters by title or id. */
    list(
      botId: string,
      page: { limit: number; cursor?: string; q?: string; order?: SourceOrder },
    ): Promise<{ sources: SourceSummary[]; next_cursor: string }> {
      return listSources(deps.db, botId, page);
    },

    async get(botId: string, sourceId: string): Promise<Source> {
      const source = await getSource(deps.db, botId, sourceId);
      if (!source) throw errors.notFound('No knowledge source with this id');
      return source;
    },

    async remove(botId: string, sourceId: string): Promise<{ status: 'deleted'; source_id: string }> {
      if (!(await deleteSource(deps.db, botId, sourceId))) throw errors.notFound('No knowledge source with this id');
      return { status: 'deleted', source_id: sourceId };
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
