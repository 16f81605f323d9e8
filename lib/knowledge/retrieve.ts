import type { Queryable } from '../db';
import { searchText } from './normalize';
import { signBits } from './store';
import { docOrdinalSql, docSeqSql, lengthFactorSql, termWeightSql } from './term-stats';

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
  /** Higher is better. Comparable within one call only: BM25 alone, or a fused rank with embeddings. */
  score: number;
}

export interface RetrieveOptions {
  /** Passages to return; default 5, at most 50. */
  limit?: number;
  /** The question's embedding, from the same embedder the fragments were written with. */
  queryEmbedding?: number[];
  /**
   * Read every posting of every word of the question: BM25 exactly, however large the bot (slower past tens of
   * thousands of fragments). For measurements; by default long posting lists are cut (FULL_READ_POSTINGS).
   */
  exact?: boolean;
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
 * Postings read whole, the question's rarest words first, while their sum stays within this: a question whose words
 * are in fewer postings is ranked by exact BM25 (at 10 000 fragments in bench/retrieval.ts, every judged question's top
 * 10 is exact BM25's). 16 000 cost 14.3 ms of Postgres CPU a retrieval at 100 000 fragments against 10.6
 * (docs/decisions/147-bm25-in-postgres.md).
 */
const FULL_READ_POSTINGS = 8_000;
/** Of each word past that budget (the commonest ones), its strongest postings (by `impact`) are read. */
const STRONGEST_POSTINGS = 400;
/** The best candidates by what was read, whose scores are then completed (the cut words' own postings). */
const RESCORED = 200;
/** A question's word no fragment of the bot contains is looked up by its prefix: at most this many words. */
const PREFIX_VARIANTS = 4;

/**
 * The CTEs that rank the bot's fragments by BM25 for the question ($1 bot, $2 search text), ending in
 * `lexical(doc, score)`: at most RESCORED candidates (a fragment's key: docKeySql) with their complete scores, unordered.
 *
 * - `stats`: N and the length factor k1·b/avgdl, from the bot's totals.
 * - `q`: the question's words (with their frequency in it) that the bot has, by term id, each with its idf,
 *   qtf·ln(1 + (N − df + 0.5)/(df + 0.5)); a word the bot does not have, of five letters or more, stands for the bot's words that start
 *   like it without its last letter (Snowball stems some forms of one Russian word differently: талисман →
 *   талисма, талисманом → талисман) — a range of the terms' primary key, lexemes being "C"-collated (bytewise;
 *   chr(1114111) is the last code point). `m`: how many of its postings are read.
 * - `seen`: each word's first `m` postings, strongest first: an index-only scan of knowledge_postings_impact_idx
 *   (term, impact DESC). Postings carry no bot id: a term id belongs to one bot, and the bot's terms are the way in.
 * - `cand`: the RESCORED fragments with the highest score over what was read; `lexical` adds what the cut words
 *   contribute to each (the forward index, one scan per candidate), so every returned score is the exact BM25.
 */
function lexicalCtes(exact: boolean): string {
  const budget = exact
    ? 'df'
    : `CASE WHEN sum(df) OVER (ORDER BY df, id) <= ${FULL_READ_POSTINGS} THEN df
                 ELSE least(df, ${STRONGEST_POSTINGS}) END`;
  return `stats AS MATERIALIZED (
        SELECT fragments::float8 AS n, ${lengthFactorSql('greatest(length::float8 / greatest(fragments, 1), 1)')} AS lf
          FROM knowledge_stats WHERE bot_id = $1),
      words AS MATERIALIZED (
        SELECT u.lexeme COLLATE "C" AS lexeme, coalesce(array_length(u.positions, 1), 1) AS qtf
          FROM unnest(to_tsvector('knowledge_search', $2)) AS u),
      terms AS (
        SELECT t.id, t.df, w.qtf FROM words w JOIN knowledge_terms t ON t.bot_id = $1 AND t.lexeme = w.lexeme
        UNION ALL
        SELECT v.id, v.df, w.qtf
          FROM words w CROSS JOIN LATERAL (
                 SELECT t.id, t.df FROM knowledge_terms t
                  WHERE t.bot_id = $1 AND t.lexeme >= left(w.lexeme, -1)
                    AND t.lexeme < left(w.lexeme, -1) || chr(1114111)
                  ORDER BY t.df DESC, t.lexeme LIMIT ${PREFIX_VARIANTS}) v
         WHERE char_length(w.lexeme) >= 5 AND w.lexeme !~ '[[:digit:][:punct:]]'
           AND NOT EXISTS (SELECT 1 FROM knowledge_terms e WHERE e.bot_id = $1 AND e.lexeme = w.lexeme)),
      q AS MATERIALIZED (
        SELECT id, df, qtf * ln(1 + (s.n - df + 0.5) / (df + 0.5)) AS idf, ${budget} AS m
          FROM stats s, (SELECT id, min(df) AS df, max(qtf) AS qtf FROM terms GROUP BY id) t),
      cut AS MATERIALIZED (SELECT array_agg(id) AS terms FROM q WHERE m < df),
      seen AS (
        SELECT p.doc, q.m < q.df AS cut, q.idf * ${termWeightSql('p.tf', 'p.len', 's.lf')} AS w
          FROM stats s CROSS JOIN q CROSS JOIN LATERAL (
                 SELECT p.doc, p.tf, p.len FROM knowledge_postings p
                  WHERE p.term = q.id ORDER BY p.impact DESC LIMIT q.m) p),
      cand AS MATERIALIZED (
        SELECT doc, sum(w) AS partial, coalesce(sum(w) FILTER (WHERE NOT cut), 0) AS base
          FROM seen GROUP BY doc ORDER BY partial DESC, doc LIMIT ${RESCORED}),
      lexical AS (
        SELECT c.doc,
               c.base + CASE WHEN cut.terms IS NULL THEN 0 ELSE coalesce((
                 SELECT sum(q.idf * ${termWeightSql('p.tf', 'p.len', 's.lf')})
                   FROM knowledge_postings p JOIN q ON q.id = p.term
                  WHERE p.doc = c.doc AND p.term = ANY (cut.terms)), 0) END AS score
          FROM cand c CROSS JOIN stats s CROSS JOIN cut)`;
}

/**
 * The retrieval statement, exported so tests can EXPLAIN exactly what runs. It is prepared (named, once per
 * connection and shape): a chat turn runs it, and parsing and planning it each time cost Postgres more CPU than
 * running it. Full text alone: BM25 over the bot's term statistics (lexicalCtes, docs/decisions/147-bm25-in-postgres.md).
 * With a query embedding, the top BM25 and the top cosine candidates are fused by reciprocal rank, still in one
 * statement. Plain Postgres has no vector index: the bot's embedded fragments are ranked by Hamming distance over
 * their sign bits (a cheap scan), and only the nearest few hundred get an exact cosine (a dot product over
 * unit-length `real[]`).
 */
export function buildRetrievalQuery(
  botId: string,
  query: string,
  opts: RetrieveOptions = {},
): { name: string; text: string; values: unknown[] } {
  const limit = Math.min(MAX_LIMIT, Math.max(1, Math.trunc(opts.limit ?? DEFAULT_LIMIT)));
  const search = queryText(query);
  const exact = opts.exact ?? false;
  const suffix = exact ? '-exact' : '';
  if (!opts.queryEmbedding?.length) {
    return {
      name: `retrieve-full-text${suffix}`,
      // Rank and cut first, then fetch texts and titles for the few rows left.
      text: `WITH ${lexicalCtes(exact)}
      SELECT s.source_id, s.title, s.url, f.text, f.heading_path, f.page, top.score
        FROM (SELECT doc, score FROM lexical ORDER BY score DESC, doc LIMIT $3) top
        JOIN knowledge_sources s ON s.bot_id = $1 AND s.seq = ${docSeqSql('top.doc')}
        JOIN knowledge_fragments f ON f.bot_id = $1 AND f.source_id = s.source_id AND f.ordinal = ${docOrdinalSql('top.doc')}
       ORDER BY top.score DESC, top.doc`,
      values: [botId, search, limit],
    };
  }
  const pool = Math.max(MIN_POOL, 2 * limit);
  const norm = Math.sqrt(opts.queryEmbedding.reduce((sum, x) => sum + x * x, 0)) || 1;
  const unit = opts.queryEmbedding.map((x) => x / norm);
  return {
    name: `retrieve-fused-${pool}${suffix}`, // the pool is in the text, so each pool size is a statement of its own
    text: `WITH ${lexicalCtes(exact)},
      lexical_ranked AS (
        SELECT s.source_id, ${docOrdinalSql('l.doc')} AS ordinal, row_number() OVER (ORDER BY l.score DESC, l.doc) AS rnk
          FROM (SELECT doc, score FROM lexical ORDER BY score DESC, doc LIMIT ${pool}) l
          JOIN knowledge_sources s ON s.bot_id = $1 AND s.seq = ${docSeqSql('l.doc')}),
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
          FROM lexical_ranked l FULL JOIN semantic m USING (source_id, ordinal)
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
