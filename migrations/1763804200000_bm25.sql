-- Up Migration

-- BM25 ranking of knowledge (docs/decisions/147-bm25-in-postgres.md). ts_rank has no inverse document frequency; BM25
-- needs, per bot, the number of fragments N, their total length, each word's document frequency, and each fragment's
-- term frequencies and length. All of it is derived from `knowledge_fragments.tsv` (whatever the writer put there:
-- title, headings, body) by lib/knowledge/term-stats.ts, in the transaction that writes or deletes the fragments;
-- writes of one bot already serialize on its `bots` row (knowledge_version), so the counts cannot race.

-- Per bot: fragments that have at least one word, and the sum of their lengths (words after stopwords, as in tsv).
CREATE TABLE knowledge_stats (
  bot_id     text PRIMARY KEY REFERENCES bots(id) ON DELETE CASCADE,
  fragments  bigint NOT NULL,
  length     bigint NOT NULL
);

-- Per bot and word (a tsvector lexeme): in how many fragments it is. "C" collation: a prefix is a range of the index
-- whatever the database's default collation (a question's word the bot has never seen is looked up by its prefix).
CREATE TABLE knowledge_terms (
  bot_id  text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  lexeme  text COLLATE "C" NOT NULL,
  df      integer NOT NULL CHECK (df > 0),
  PRIMARY KEY (bot_id, lexeme)
);

-- Postings: one row per word of a fragment, with its frequency there and the fragment's length, so a retrieval reads
-- no fragment to rank. A fragment is (its source's `seq`, its ordinal): eight bytes where a source id is ~25.
-- The primary key is the forward index (a fragment's words together: deleted as one range, and a candidate's score
-- completed with one index-only scan: it includes tf and len); `knowledge_postings_impact_idx` is the inverted one, each word's postings strongest first
-- (`impact`: the posting's BM25 term weight with the bot's average length when it was written, an ordering only —
-- scores are computed with the current statistics), covering, so a word's strongest postings are an index-only scan.
-- No foreign key: a per-row check costs more than the insert itself (3.5x, measured); a bot's postings go with its
-- `knowledge_stats` row instead (trigger below), and the application deletes a source's postings with its fragments.
CREATE TABLE knowledge_postings (
  bot_id   text NOT NULL,
  seq      bigint NOT NULL,
  ordinal  integer NOT NULL,
  lexeme   text COLLATE "C" NOT NULL,
  tf       smallint NOT NULL,
  len      integer NOT NULL,
  impact   real NOT NULL,
  PRIMARY KEY (bot_id, seq, ordinal, lexeme) INCLUDE (tf, len)
);
CREATE INDEX knowledge_postings_impact_idx ON knowledge_postings (bot_id, lexeme, impact DESC)
  INCLUDE (seq, ordinal, tf, len);

-- Deleting a bot deletes its statistics by cascade, and this its postings.
CREATE FUNCTION knowledge_postings_forget_bot() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM knowledge_postings WHERE bot_id = OLD.bot_id;
  RETURN NULL;
END $$;
CREATE TRIGGER knowledge_postings_forget_bot AFTER DELETE ON knowledge_stats
  FOR EACH ROW EXECUTE FUNCTION knowledge_postings_forget_bot();

-- The fragments written before this migration (each fragment's length from its own tsv: a window over every posting
-- sorted them all, many times slower).
CREATE TEMPORARY TABLE bm25_backfill ON COMMIT DROP AS
  SELECT f.bot_id, s.seq, f.ordinal, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf, l.len
    FROM knowledge_fragments f
    JOIN knowledge_sources s ON s.bot_id = f.bot_id AND s.source_id = f.source_id
    CROSS JOIN LATERAL (SELECT sum(coalesce(array_length(positions, 1), 1))::int AS len FROM unnest(f.tsv)) AS l
    CROSS JOIN LATERAL unnest(f.tsv) AS u;
INSERT INTO knowledge_stats (bot_id, fragments, length)
  SELECT bot_id, count(DISTINCT (seq, ordinal)), sum(tf) FROM bm25_backfill GROUP BY bot_id;
INSERT INTO knowledge_terms (bot_id, lexeme, df)
  SELECT bot_id, lexeme, count(*) FROM bm25_backfill GROUP BY bot_id, lexeme;
INSERT INTO knowledge_postings (bot_id, seq, ordinal, lexeme, tf, len, impact)
  SELECT b.bot_id, b.seq, b.ordinal, b.lexeme, b.tf, b.len,
         b.tf::float8 / (b.tf + 0.3::float8 + 0.9::float8 / greatest(s.length::float8 / s.fragments, 1) * b.len)
    FROM bm25_backfill b JOIN knowledge_stats s USING (bot_id);

-- What ranked before, unused now: the (bot_id, tsv) GIN index (kept up on every write: about half of a write's time)
-- and the question-to-tsquery function. `tsv` stays: it is what the counts above are derived from.
DROP INDEX knowledge_fragments_search_idx;
DROP FUNCTION knowledge_tsquery(text);

-- Down Migration
CREATE FUNCTION knowledge_tsquery(search text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg(item, ' | ')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('knowledge_search', search))) AS lexeme,
         LATERAL (SELECT '''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''' AS item
                  UNION ALL
                  SELECT '''' || replace(replace(left(lexeme, -1), '\', '\\'), '''', '''''') || ''':*'
                   WHERE char_length(lexeme) >= 5 AND lexeme !~ '[[:digit:][:punct:]]') AS items
$$;
CREATE INDEX knowledge_fragments_search_idx ON knowledge_fragments USING gin (bot_id, tsv)
  WITH (fastupdate = on, gin_pending_list_limit = 256);
DROP TABLE knowledge_postings;
DROP TABLE knowledge_terms;
DROP TABLE knowledge_stats;
DROP FUNCTION knowledge_postings_forget_bot();
