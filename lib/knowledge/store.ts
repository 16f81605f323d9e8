import { createHash } from 'node:crypto';
import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import { withTransaction, type Db, type DbClient, type Queryable } from '../db';
import { errors } from '../errors';
import { newId } from '../ids';
import { LIMITS } from '../limits';
import { type SplitPassage, cleanText, splitDocument, splitText } from './chunk';
import type { DocumentModel } from './document';
import { SEARCH_TEXT_VERSION, searchText } from './normalize';
import { indexFragments, unindexFragments } from './term-stats';

/** Turns texts into vectors (one per text, all of one dimension). No embedder is configured by default. */
export type Embedder = (texts: string[]) => Promise<number[][]>;

export type SourceOrigin = 'api' | 'scan' | 'file';

export interface SourceInput {
  botId: string;
  /** Stable id chosen by the integrator; the same id replaces the source. Absent: a new `src_…` id. */
  sourceId?: string;
  title?: string;
  text: string;
  origin?: SourceOrigin;
  url?: string | null;
  /**
   * The text's structure (a file read by its reader, a scanned page's blocks): split on it. Absent, `text` is read as
   * Markdown-ish plain text (lib/knowledge/document.ts, `readPlainText`).
   */
  document?: DocumentModel;
}

/** What a source is, as lists show it: a text written through the API or the dashboard, a scanned page, or a file. */
export type SourceKind = 'text' | 'page' | 'file';

/** The original of a file source (lib/knowledge/files.ts). */
export interface SourceFile {
  name: string;
  content_type: string;
  size: number;
  pages: number | null;
  /** Unix ms */
  uploaded_at: number;
}

export interface SourceSummary {
  source_id: string;
  title: string;
  fragments: number;
  origin: SourceOrigin;
  kind: SourceKind;
  /** `reading` while a file is read; `failed` (with `reason`) when it could not be; else `indexed`. */
  status: 'reading' | 'indexed' | 'failed';
  reason: string | null;
  url: string | null;
  file: SourceFile | null;
  /** Unix ms */
  created_at: number;
  /** Unix ms */
  updated_at: number;
}

export interface Source extends SourceSummary {
  text: string;
}

/** A source's passage as stored: its text, the headings it sits under, its page. */
export interface StoredPassage {
  text: string;
  heading_path: string[];
  page: number | null;
}

/** The search configuration created by the knowledge migration. */
export const SEARCH_CONFIG = 'knowledge_search';
const TITLE_CHARS = 120;
const INSERT_BATCH = 500;
const EMBED_BATCH = 128;

export class UnknownBotError extends Error {
  constructor(botId: string) {
    super(`No bot with id ${botId}`);
    this.name = 'UnknownBotError';
  }
}

/** A source written without a title is listed under its first line, cut at a word. */
export function deriveTitle(text: string): string {
  const line = text.trim().split('\n', 1)[0].trim().replace(/\s+/g, ' ');
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.slice(0, TITLE_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

function contentHash(title: string, text: string): Buffer {
  // The index version is part of the hash: a new chunker or normalizer re-indexes sources on their next write.
  return createHash('sha256').update(`v${SEARCH_TEXT_VERSION}\u0000${title}\u0000${text}`).digest();
}

async function embedAll(embed: Embedder, texts: string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    const batch = texts.slice(i, i + EMBED_BATCH);
    const vectors = await embed(batch);
    if (vectors.length !== batch.length) {
      throw new Error(`Embedder returned ${vectors.length} vectors for ${batch.length} texts`);
    }
    out.push(...vectors);
  }
  const dims = out[0]?.length ?? 0;
  return out.map((v) => {
    if (v.length !== dims || !v.every(Number.isFinite)) {
      throw new Error('Embedder returned vectors of mixed or invalid dimensions');
    }
    // Stored at unit length, so cosine similarity is a plain dot product in SQL.
    const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1;
    return v.map((x) => x / norm);
  });
}

/** The signs of a vector as a bit string: its binary quantization, compared by Hamming distance. */
export function signBits(vector: number[]): string {
  return vector.map((x) => (x > 0 ? '1' : '0')).join('');
}

/** Bumps the bot's knowledge version (its answer cache key) and locks the bot row: writes of one bot serialize. */
async function bumpVersion(tx: Queryable, botId: string): Promise<void> {
  const res = await tx.query(`UPDATE bots SET knowledge_version = knowledge_version + 1 WHERE id = $1`, [botId]);
  if (!res.rowCount) throw new UnknownBotError(botId);
}

async function insertFragments(
  tx: DbClient,
  botId: string,
  sourceId: string,
  /** The title its words are ranked under: the given one, '' for a derived one. */
  indexedTitle: string,
  passages: SplitPassage[],
  embeddings: number[][] | null,
): Promise<void> {
  for (let i = 0; i < passages.length; i += INSERT_BATCH) {
    const batch = passages.slice(i, i + INSERT_BATCH);
    // One statement per batch. The title's words and the passage's headings are in its vector at weight C (body: D),
    // so a question naming a section finds that section's passages.
    const vectors = embeddings?.slice(i, i + batch.length);
    await tx.query(
      `INSERT INTO knowledge_fragments (bot_id, source_id, ordinal, text, tsv, embedding, embedding_bits, heading_path, page)
       SELECT $1, $2, f.ordinal, f.text,
              setweight(to_tsvector('${SEARCH_CONFIG}', $3 || ' ' || f.headings), 'C') || to_tsvector('${SEARCH_CONFIG}', f.search),
              f.embedding::real[], f.bits::varbit, ARRAY(SELECT json_array_elements_text(f.path::json)), f.page
         FROM unnest($4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[])
                AS f(ordinal, text, search, embedding, bits, headings, path, page)`,
      [
        botId,
        sourceId,
        searchText(indexedTitle),
        batch.map((_, j) => i + j),
        batch.map((p) => p.text),
        batch.map((p) => searchText(p.text)),
        vectors ? vectors.map((v) => `{${v.join(',')}}`) : batch.map(() => null),
        vectors ? vectors.map(signBits) : batch.map(() => null),
        batch.map((p) => searchText(p.headingPath.join(' '))),
        batch.map((p) => JSON.stringify(p.headingPath)),
        batch.map((p) => p.page ?? null),
      ],
    );
  }
}

/** What the model (and an embedding) reads of a passage: where it sits, then its text. */
export function passageContext(title: string, headingPath: string[]): string {
  const path = headingPath.filter((h, i) => !(i === 0 && h === title));
  return [title, ...path].filter(Boolean).join(' › ');
}

/**
 * Writes a source and replaces its fragments, in one transaction that also bumps the bot's knowledge version.
 * The same `sourceId` replaces the source (no duplicate fragments); an unchanged rewrite keeps its fragments.
 * Embeddings, when an embedder is given, are computed before the transaction so no lock waits on the network.
 */
export async function upsertSource(
  db: Db,
  input: SourceInput,
  opts: {
    embed?: Embedder;
    /**
     * Runs first inside the write's transaction (after the bot row is locked): a file's reading checks there that
     * its upload is still the current one, and throws to write nothing if not.
     */
    inTransaction?: (tx: DbClient) => Promise<void>;
  } = {},
): Promise<{ sourceId: string; fragments: number }> {
  const sourceId = input.sourceId ?? newId('src');
  const text = input.text.replace(/\u0000/g, '');
  // Only the head of the text can hold its first line: no need to clean 5 MiB for a title.
  const given = (input.title ?? '').replace(/\u0000/g, '').trim();
  const title = given || deriveTitle(cleanText(text.trimStart().slice(0, 4 * TITLE_CHARS)));
  // A derived title is a label for lists, not a field: its words are the text's first line, already in the body, and
  // ranked as a title they would count three times (BM25F weight 2, decision 147). Only a given title is indexed.
  const indexedTitle = given ? title : '';
  const origin = input.origin ?? 'api';
  const url = input.url ?? null;
  const hash = contentHash(indexedTitle, text);

  if (input.sourceId !== undefined) {
    const existing = await db.query<{ content_hash: Buffer; fragment_count: number; embedded: boolean }>(
      `SELECT s.content_hash, s.fragment_count,
              NOT EXISTS (SELECT 1 FROM knowledge_fragments f
                           WHERE f.bot_id = s.bot_id AND f.source_id = s.source_id AND f.embedding IS NULL) AS embedded
         FROM knowledge_sources s WHERE s.bot_id = $1 AND s.source_id = $2`,
      [input.botId, sourceId],
    );
    const row = existing.rows[0];
    if (row && row.content_hash.equals(hash) && (!opts.embed || row.embedded)) {
      const touched = await withTransaction(db, async (tx) => {
        await bumpVersion(tx, input.botId);
        await opts.inTransaction?.(tx);
        const res = await tx.query<{ fragment_count: number }>(
          `UPDATE knowledge_sources SET origin = $3, url = $4, status = 'indexed', reason = NULL, updated_at = now()
            WHERE bot_id = $1 AND source_id = $2 AND content_hash = $5 RETURNING fragment_count`,
          [input.botId, sourceId, origin, url, hash],
        );
        return res.rows[0];
      });
      // Changed or deleted in between: fall through to a full write.
      if (touched) return { sourceId, fragments: touched.fragment_count };
    }
  }

  const passages = input.document ? splitDocument(input.document) : splitText(text);
  const embeddings =
    opts.embed && passages.length
      ? await embedAll(
          opts.embed,
          passages.map((p) => `${passageContext(title, p.headingPath)}\n\n${p.text}`),
        )
      : null;

  await withTransaction(db, async (tx) => {
    await bumpVersion(tx, input.botId);
    await opts.inTransaction?.(tx);
    // The old fragments leave BM25's counts before they go (a new source has none).
    await unindexFragments(tx, input.botId, sourceId);
    await tx.query(
      `INSERT INTO knowledge_sources (bot_id, source_id, title, text, origin, url, content_hash, fragment_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (bot_id, source_id) DO UPDATE
         SET title = EXCLUDED.title, text = EXCLUDED.text, origin = EXCLUDED.origin, url = EXCLUDED.url,
             content_hash = EXCLUDED.content_hash, fragment_count = EXCLUDED.fragment_count, updated_at = now(),
             status = 'indexed', reason = NULL`,
      [input.botId, sourceId, title, text, origin, url, hash, passages.length],
    );
    await tx.query(`DELETE FROM knowledge_fragments WHERE bot_id = $1 AND source_id = $2`, [input.botId, sourceId]);
    await insertFragments(tx, input.botId, sourceId, indexedTitle, passages, embeddings);
    await indexFragments(tx, input.botId, sourceId);
  });
  return { sourceId, fragments: passages.length };
}

/** Deletes a source and its fragments; false when the bot has no such source (nothing is bumped then). */
export async function deleteSource(db: Db, botId: string, sourceId: string): Promise<boolean> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    // The bot row first, as in upsertSource: one lock order, no deadlock between a write and a delete.
    await bumpVersion(client, botId);
    await unindexFragments(client, botId, sourceId);
    const res = await client.query(`DELETE FROM knowledge_sources WHERE bot_id = $1 AND source_id = $2`, [
      botId,
      sourceId,
    ]);
    await client.query(res.rowCount ? 'COMMIT' : 'ROLLBACK');
    return Boolean(res.rowCount);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

// Columns of `knowledge_sources`, plus a file source's original (one row by primary key, NULL for other sources).
const SUMMARY_COLUMNS = `source_id, title, fragment_count AS fragments, origin,
  CASE origin WHEN 'api' THEN 'text' WHEN 'scan' THEN 'page' ELSE 'file' END AS kind, status, reason, url,
  (SELECT json_build_object('name', f.name, 'content_type', f.content_type, 'size', f.size, 'pages', f.pages,
                            'uploaded_at', (extract(epoch FROM f.uploaded_at) * 1000)::bigint)
     FROM knowledge_files f WHERE f.bot_id = knowledge_sources.bot_id AND f.source_id = knowledge_sources.source_id) AS file,
  (extract(epoch FROM created_at) * 1000)::bigint AS created_at,
  (extract(epoch FROM updated_at) * 1000)::bigint AS updated_at`;

/** The orders a bot's sources list in: by `seq`, which an update keeps (a source never moves while being paged). */
export type SourceOrder = 'newest' | 'oldest';

/** A LIKE pattern matching `text` anywhere, its `%`, `_` and `\` taken literally (with `ESCAPE '\'`). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}

/** The `origin` each kind of source is stored with. */
const ORIGIN_OF_KIND: Record<SourceKind, SourceOrigin> = { text: 'api', page: 'scan', file: 'file' };

/**
 * One page of a bot's sources, oldest first unless asked otherwise (an update keeps a source's place, so paging never
 * skips or repeats one). `kind` keeps the sources of that kind. `q` keeps those whose title or `source_id` contains
 * it, in any case, or whose passages hold all of its words: the search index's words (any form of a word, as the
 * agent's retrieval reads them), through the same GIN index (bot id and words), so a bot with thousands of sources
 * is searched in one index scan (docs/decisions/153-see-what-the-agent-reads.md has the measurement). The cursor carries
 * its order and is refused in the other one (a newest-first position read oldest first would skip the whole list);
 * it carries no `q`, and needs none: under any filter it is still a position in the same order. `limit` is cut to
 * 1–200; the route rejects values below 1 before they get here.
 */
export async function listSources(
  db: Queryable,
  botId: string,
  page: { limit?: number; cursor?: string; q?: string; order?: SourceOrder; kind?: SourceKind } = {},
): Promise<{ sources: SourceSummary[]; next_cursor: string }> {
  const { min, max, default: fallback } = LIMITS.pageSize;
  const limit = Math.min(max, Math.max(min, Math.trunc(page.limit ?? fallback)));
  const newest = page.order === 'newest';
  const params: unknown[] = [botId, limit + 1];
  const where = ['bot_id = $1'];
  if (page.cursor) {
    const cursor = decodeCursor(page.cursor, CURSORS.sources);
    if ((cursor.o === 'newest') !== newest) {
      throw errors.badRequest(`cursor: from the list in the other order; pass the same order as for its first page`);
    }
    params.push(cursor.seq);
    where.push(`seq ${newest ? '<' : '>'} $${params.length}`);
  }
  if (page.kind) {
    params.push(ORIGIN_OF_KIND[page.kind]);
    where.push(`origin = $${params.length}`);
  }
  if (page.q) {
    params.push(containsPattern(page.q), searchText(page.q));
    const like = `$${params.length - 1}`;
    // websearch_to_tsquery: every word (AND), "a phrase", -a word left out; stopwords alone match nothing.
    where.push(
      `(title ILIKE ${like} ESCAPE '\\' OR source_id ILIKE ${like} ESCAPE '\\'
        OR source_id IN (SELECT f.source_id FROM knowledge_fragments f
                          WHERE f.bot_id = $1 AND f.tsv @@ websearch_to_tsquery('${SEARCH_CONFIG}', $${params.length})))`,
    );
  }
  // (bot_id, seq) is unique and indexed: either order is an index scan, walked forwards or backwards.
  const res = await db.query<SourceSummary & { seq: number }>(
    `SELECT ${SUMMARY_COLUMNS}, seq FROM knowledge_sources
      WHERE ${where.join(' AND ')} ORDER BY seq ${newest ? 'DESC' : 'ASC'} LIMIT $2`,
    params,
  );
  // One row more than asked tells whether another page exists, so the last page says so itself.
  const more = res.rows.length > limit;
  const rows = res.rows.slice(0, limit);
  const seq = rows[rows.length - 1]?.seq;
  return {
    sources: rows.map(({ seq: _seq, ...s }) => s),
    next_cursor: more ? encodeCursor(newest ? { seq, o: 'newest' } : { seq }) : '',
  };
}

export async function getSource(db: Queryable, botId: string, sourceId: string): Promise<Source | null> {
  const res = await db.query<Source>(
    `SELECT ${SUMMARY_COLUMNS}, text FROM knowledge_sources WHERE bot_id = $1 AND source_id = $2`,
    [botId, sourceId],
  );
  return res.rows[0] ?? null;
}

/** A source's passages in order, with their heading paths and pages. */
export async function sourcePassages(db: Queryable, botId: string, sourceId: string): Promise<StoredPassage[]> {
  const res = await db.query<StoredPassage>(
    `SELECT text, heading_path, page FROM knowledge_fragments WHERE bot_id = $1 AND source_id = $2 ORDER BY ordinal`,
    [botId, sourceId],
  );
  return res.rows;
}

/** The bot's answer-cache key: bumped by every knowledge write and delete. */
export async function knowledgeVersion(db: Queryable, botId: string): Promise<number> {
  const res = await db.query<{ knowledge_version: number }>(`SELECT knowledge_version FROM bots WHERE id = $1`, [
    botId,
  ]);
  if (!res.rows[0]) throw new UnknownBotError(botId);
  return res.rows[0].knowledge_version;
}
