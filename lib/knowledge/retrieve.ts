import type { Queryable } from '../db';
import { searchText } from './normalize';
import { signBits } from './store';

export interface Passage {
  sourceId: string;
  title: string;
  /** The page's address, for a source a site scan read. */
  url?: string;
  text: string;
  /** The headings the passage sits under in its document, outermost first (empty when it has none). */
  headingPath?: string[];
  /** Its page, for a paged document (a PDF). */
  page?: number;
  /** Higher is better. Comparable within one call only: full-text rank alone, or a fused rank with embeddings. */
  score: number;
}

export interface RetrieveOptions {
  /** Passages to return; default 5, at most 50. */
  limit?: number;
  /** The question's embedding, from the same embedder the fragments were written with. */
  queryEmbedding?: number[];
}

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 50;
/** Candidates taken from each ranking before fusion: a few times the passages asked for. */
const MIN_POOL = 20;
/** Fragments nearest by Hamming distance over sign bits that get an exact cosine, per candidate: a recall margin. */
const RESCORE_FACTOR = 4;
/** Reciprocal-rank-fusion constant (Cormack et al.): damps the difference between the very top ranks. */
const RRF_K = 60;
/** A chat message may be 8000 characters; the words of its first part are plenty to find passages. */
const QUERY_CHARS = 2000;

function queryText(query: string): string {
  const cut =
    query.length > QUERY_CHARS ? query.slice(0, query.lastIndexOf(' ', QUERY_CHARS) + 1 || QUERY_CHARS) : query;
  return searchText(cut);
}

/**
 * The question's tsquery, computed once per statement (an InitPlan). As a plain call on the statement's parameter it
 * would be evaluated again for every fragment ranked once the prepared statement uses its generic plan: ≈ 20 ms
 * instead of ≈ 2 for a question whose words are in a thousand fragments.
 */
const TSQUERY = '(SELECT knowledge_tsquery($2))';

/**
 * The retrieval statement, exported so tests can EXPLAIN exactly what runs. It is prepared (named, once per
 * connection and shape): a chat turn runs it, and parsing and planning it each time cost Postgres ≈ 0.3 ms of CPU
 * against ≈ 0.06 ms prepared (each custom plan also evaluated the question's tsquery, once per place it is used).
 * Full text alone: one bitmap scan of `knowledge_fragments_search_idx` (bot id and words together), ranked by
 * ts_rank. With a query embedding, the top full-text and the top cosine candidates are fused by reciprocal rank,
 * still in one statement. Plain Postgres has no vector index: the bot's embedded fragments are ranked by Hamming
 * distance over their sign bits (a cheap scan), and only the nearest few hundred get an exact cosine (a dot product
 * over unit-length `real[]`).
 */
export function buildRetrievalQuery(
  botId: string,
  query: string,
  opts: RetrieveOptions = {},
): { name: string; text: string; values: unknown[] } {
  const limit = Math.min(MAX_LIMIT, Math.max(1, Math.trunc(opts.limit ?? DEFAULT_LIMIT)));
  const search = queryText(query);
  if (!opts.queryEmbedding?.length) {
    return {
      name: 'retrieve-full-text',
      // Rank and cut first, then fetch titles for the few rows left.
      text: `WITH top AS (
        SELECT f.source_id, f.ordinal, f.text, f.heading_path, f.page, ts_rank(f.tsv, ${TSQUERY})::float8 AS score
          FROM knowledge_fragments f
         WHERE f.bot_id = $1 AND f.tsv @@ ${TSQUERY}
         ORDER BY score DESC, f.source_id, f.ordinal
         LIMIT $3)
      SELECT top.source_id, s.title, s.url, top.text, top.heading_path, top.page, top.score
        FROM top JOIN knowledge_sources s ON s.bot_id = $1 AND s.source_id = top.source_id
       ORDER BY top.score DESC, top.source_id, top.ordinal`,
      values: [botId, search, limit],
    };
  }
  const pool = Math.max(MIN_POOL, 2 * limit);
  const norm = Math.sqrt(opts.queryEmbedding.reduce((sum, x) => sum + x * x, 0)) || 1;
  const unit = opts.queryEmbedding.map((x) => x / norm);
  return {
    name: `retrieve-fused-${pool}`, // the pool is in the text, so each pool size is a statement of its own
    text: `WITH lexical AS (
        SELECT f.source_id, f.ordinal,
               row_number() OVER (ORDER BY ts_rank(f.tsv, ${TSQUERY}) DESC, f.source_id, f.ordinal) AS rnk
          FROM knowledge_fragments f
         WHERE f.bot_id = $1 AND f.tsv @@ ${TSQUERY}
         ORDER BY rnk LIMIT ${pool}),
      semantic AS (
        SELECT c.source_id, c.ordinal, row_number() OVER (ORDER BY d.sim DESC, c.source_id, c.ordinal) AS rnk
          FROM (SELECT f.source_id, f.ordinal, f.embedding
                  FROM knowledge_fragments f
                 WHERE f.bot_id = $1 AND length(f.embedding_bits) = length($5::varbit)
                 ORDER BY bit_count(f.embedding_bits # $5::varbit), f.source_id, f.ordinal
                 LIMIT ${RESCORE_FACTOR * pool}) c
          CROSS JOIN LATERAL (SELECT sum(a * b) AS sim FROM unnest(c.embedding, $4::real[]) AS v(a, b)) d
         ORDER BY rnk LIMIT ${pool}),
      top AS (
        SELECT source_id, ordinal,
               COALESCE(1.0 / (${RRF_K} + l.rnk), 0) + COALESCE(1.0 / (${RRF_K} + m.rnk), 0) AS score
          FROM lexical l FULL JOIN semantic m USING (source_id, ordinal)
         ORDER BY score DESC, source_id, ordinal
         LIMIT $3)
      SELECT top.source_id, s.title, s.url, f.text, f.heading_path, f.page, top.score::float8 AS score
        FROM top
        JOIN knowledge_fragments f ON f.bot_id = $1 AND f.source_id = top.source_id AND f.ordinal = top.ordinal
        JOIN knowledge_sources s ON s.bot_id = $1 AND s.source_id = top.source_id
       ORDER BY top.score DESC, top.source_id, top.ordinal`,
    values: [botId, search, limit, `{${unit.join(',')}}`, signBits(unit)],
  };
}

/**
 * The passages of one bot's knowledge that best answer `query`, in one statement. Never reads another bot's
 * fragments: every branch filters on the bot id.
 */
export async function retrievePassages(
  db: Queryable,
  botId: string,
  query: string,
  opts: RetrieveOptions = {},
): Promise<Passage[]> {
  const res = await db.query<{
    source_id: string;
    title: string;
    url: string | null;
    text: string;
    heading_path: string[] | null;
    page: number | null;
    score: number;
  }>(buildRetrievalQuery(botId, query, opts));
  return res.rows.map((r) => ({
    sourceId: r.source_id,
    title: r.title,
    ...(r.url ? { url: r.url } : {}),
    text: r.text,
    ...(r.heading_path?.length ? { headingPath: r.heading_path } : {}),
    ...(r.page != null ? { page: r.page } : {}),
    score: r.score,
  }));
}

/** A passage as it is shown to people (the knowledge search, the passages a run read): the wire's field names. */
export interface PassageView {
  source_id: string;
  title: string;
  heading_path: string[];
  page: number | null;
  text: string;
  score: number;
  url?: string;
}

export function passageView(p: Passage): PassageView {
  return {
    source_id: p.sourceId,
    title: p.title,
    heading_path: p.headingPath ?? [],
    page: p.page ?? null,
    text: p.text,
    score: p.score,
    ...(p.url ? { url: p.url } : {}),
  };
}
