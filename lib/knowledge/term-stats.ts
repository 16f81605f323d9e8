import type { Queryable } from '../db';

/**
 * BM25's term statistics for one bot, kept beside its fragments (migrations/1763804200000_bm25.sql and
 * 1763804700000_bm25_fields_and_term_ids.sql): the bot's
 * fragment count and total length (`knowledge_stats`), each word's document frequency (`knowledge_terms`), and each
 * fragment's words (by term id, under one key: docKeySql) with their frequency and the fragment's length (`knowledge_postings`). Everything is derived in SQL
 * from `knowledge_fragments.tsv` — whatever the writer put into it (title, headings, body) is what is counted — by the
 * two functions below, which the store calls in the transaction that writes or deletes a source's fragments, after
 * that transaction has locked the bot's row (bumpVersion): writes of one bot are serialized, so counts never race.
 */

/** Lucene's BM25 parameters (and bm25s's defaults): term-frequency saturation and length normalization. */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

const sqlNumber = (x: number) => `${Number(x.toPrecision(12))}::float8`;

/** k1·b / avgdl as SQL: the factor of a fragment's length in its term weights, computed once per statement. */
export function lengthFactorSql(avgdl: string): string {
  return `(${sqlNumber(BM25.k1 * BM25.b)} / ${avgdl})`;
}

/**
 * A posting's BM25 term weight, tf / (tf + k1·(1 − b) + len·k1·b/avgdl), as float8 SQL (`factor`: lengthFactorSql).
 * Lucene's form, without the (k1 + 1) factor, which scales every score alike.
 */
export function termWeightSql(tf: string, len: string, factor: string): string {
  return `${tf}::float8 / (${tf} + ${sqlNumber(BM25.k1 * (1 - BM25.b))} + ${factor} * ${len})`;
}

/**
 * A fragment's key in `knowledge_postings`: its source's `seq` × 2^24 + its ordinal, one bigint (a source holds at
 * most `knowledgeBodyBytes` characters, 5 Mi, so fewer than 2^24 fragments). `docSeqSql` / `docOrdinalSql` take it apart.
 */
const DOC_ORDINAL_SPAN = 16_777_216;
export function docKeySql(seq: string, ordinal: string): string {
  return `((${seq}) * ${DOC_ORDINAL_SPAN} + ${ordinal})`;
}
export function docSeqSql(doc: string): string {
  return `((${doc}) / ${DOC_ORDINAL_SPAN})`;
}
export function docOrdinalSql(doc: string): string {
  return `((${doc}) % ${DOC_ORDINAL_SPAN})::int`;
}

/**
 * The weight of a fragment's title and heading path (the positions `insertFragments` marks with weight C in `tsv`)
 * against its body's (D): BM25F in its simple form (Robertson, Zaragoza, Taylor 2004), the field's occurrences
 * counted this many times in a term's frequency and in the fragment's length. A passage's title and headings say
 * what it is about; the body may mention a word in passing.
 */
export const TITLE_WEIGHT = 2;

/** A term's frequency in a fragment from its `unnest(tsv)` row `u`, title and headings weighted (TITLE_WEIGHT). */
export function termFrequencySql(u: string): string {
  return `(coalesce(array_length(${u}.positions, 1), 1) + ${TITLE_WEIGHT - 1} * coalesce(array_length(array_positions(${u}.weights, 'C'), 1), 0))`;
}

/**
 * Counts the fragments of a source just written (after its fragments are inserted): the bot's totals, each word's
 * document frequency (a new word gets its term id), and the source's postings. One statement. The postings go in
 * ordered by term, so the inverted index is walked once in key order rather than at random.
 */
export async function indexFragments(tx: Queryable, botId: string, sourceId: string): Promise<void> {
  await tx.query(
    `WITH f AS MATERIALIZED (
        SELECT s.seq, f.ordinal, u.lexeme, ${termFrequencySql('u')} AS tf
          FROM knowledge_sources s
          JOIN knowledge_fragments f ON f.bot_id = s.bot_id AND f.source_id = s.source_id
          CROSS JOIN LATERAL unnest(f.tsv) AS u
         WHERE s.bot_id = $1 AND s.source_id = $2),
      lens AS MATERIALIZED (SELECT seq, ordinal, sum(tf)::int AS len FROM f GROUP BY seq, ordinal),
      stats AS (
        INSERT INTO knowledge_stats AS k (bot_id, fragments, length)
        SELECT $1, count(*), coalesce(sum(len), 0) FROM lens
        ON CONFLICT (bot_id) DO UPDATE
          SET fragments = k.fragments + EXCLUDED.fragments, length = k.length + EXCLUDED.length
        RETURNING greatest(length::float8 / greatest(fragments, 1), 1) AS avgdl),
      terms AS (
        INSERT INTO knowledge_terms AS t (bot_id, lexeme, df)
        SELECT $1, lexeme, count(*) FROM f GROUP BY lexeme
        ON CONFLICT (bot_id, lexeme) DO UPDATE SET df = t.df + EXCLUDED.df
        RETURNING t.id, t.lexeme)
     INSERT INTO knowledge_postings (term, doc, tf, len, impact)
     SELECT t.id, ${docKeySql('f.seq', 'f.ordinal')}, f.tf, l.len, ${termWeightSql('f.tf', 'l.len', lengthFactorSql('stats.avgdl'))}
       FROM f JOIN terms t USING (lexeme) JOIN lens l USING (seq, ordinal) CROSS JOIN stats
      ORDER BY t.id`,
    [botId, sourceId],
  );
}

/**
 * Takes a source's fragments out of the counts (before they are deleted or replaced): its postings go, each of its
 * words' document frequency goes down (a word left in no fragment is removed), and so do the bot's totals.
 */
export async function unindexFragments(tx: Queryable, botId: string, sourceId: string): Promise<void> {
  await tx.query(
    `WITH gone AS MATERIALIZED (
        DELETE FROM knowledge_postings p USING knowledge_sources s
         WHERE s.bot_id = $1 AND s.source_id = $2
           AND p.doc >= ${docKeySql('s.seq', '0')} AND p.doc < ${docKeySql('s.seq + 1', '0')}
        RETURNING p.doc, p.term, p.tf),
      words AS MATERIALIZED (SELECT term, count(*)::int AS n FROM gone GROUP BY term),
      dropped AS (
        DELETE FROM knowledge_terms t USING words w WHERE t.id = w.term AND t.df <= w.n),
      kept AS (
        UPDATE knowledge_terms t SET df = t.df - w.n FROM words w WHERE t.id = w.term AND t.df > w.n)
     UPDATE knowledge_stats
        SET fragments = fragments - (SELECT count(DISTINCT doc) FROM gone),
            length = length - (SELECT coalesce(sum(tf), 0) FROM gone)
      WHERE bot_id = $1`,
    [botId, sourceId],
  );
}
