-- Up Migration

-- BM25, second round (docs/decisions/147-bm25-in-postgres.md).
--
-- 1. Hyphenated words are indexed as standard BM25 tokenizers index them: by their parts only. Postgres' parser
--    also emits the compound whole ("high-speed" → high-spe beside high, speed); without those mappings the parts
--    stay (hword_part, hword_asciipart, hword_numpart are still mapped). The fragments already written lose their
--    compounds here: lexemes made of hyphen-joined pieces with no dot, slash, at-sign or colon (those are hosts,
--    paths, e-mails and URLs, which keep their own mappings), and not starting with a hyphen (signed numbers).
ALTER TEXT SEARCH CONFIGURATION knowledge_search DROP MAPPING FOR asciihword, hword, numhword;
UPDATE knowledge_fragments f
   SET tsv = ts_delete(f.tsv, c.lexemes)
  FROM (SELECT bot_id, source_id, ordinal, array_agg(u.lexeme) AS lexemes
          FROM knowledge_fragments, unnest(tsv) AS u
         WHERE u.lexeme ~ '^[^-./@:]+(-[^-./@:]+)+$'
         GROUP BY bot_id, source_id, ordinal) c
 WHERE f.bot_id = c.bot_id AND f.source_id = c.source_id AND f.ordinal = c.ordinal;

-- 2. Postings name their word by a term id instead of (bot_id, lexeme): the inverted index's entries are about half
--    as wide, so writes touch fewer pages and a retrieval reads fewer. A term id belongs to one bot, and so does a
--    `seq`: postings need no bot_id (a retrieval reaches postings only through its bot's terms).
-- 3. The title and heading path (weight C in `tsv`) count twice in a term's frequency and in the fragment's length
--    (BM25F with a field weight of 2: lib/knowledge/term-stats.ts, termFrequencySql).
-- The statistics are counted afresh from `tsv`.
DROP TRIGGER knowledge_postings_forget_bot ON knowledge_stats;
DROP FUNCTION knowledge_postings_forget_bot();
DROP TABLE knowledge_postings;
DROP TABLE knowledge_terms;
TRUNCATE knowledge_stats;

-- Per bot and word: its id and in how many fragments it is. df is in no index, so its updates are HOT.
CREATE TABLE knowledge_terms (
  id      bigint GENERATED ALWAYS AS IDENTITY,
  bot_id  text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  lexeme  text COLLATE "C" NOT NULL,
  df      integer NOT NULL CHECK (df > 0),
  PRIMARY KEY (bot_id, lexeme)
);
CREATE UNIQUE INDEX knowledge_terms_id_idx ON knowledge_terms (id);

-- Postings. The primary key is the forward index (a fragment's words together: a source's postings are deleted as a
-- range of `doc`, and a candidate's score is completed with one index-only scan); the impact index is the inverted
-- one, each word's postings strongest first, covering. No foreign keys (a check per row costs more than the insert);
-- the application deletes a source's postings with its fragments, and a bot's go with its terms (trigger below).
-- A fragment is one bigint, `doc` = its source's seq × 2^24 + its ordinal (lib/knowledge/term-stats.ts, docKeySql; a
-- source holds at most 5 Mi characters, so fewer than 2^24 fragments): a retrieval sums its postings' weights grouped
-- by one column rather than two, and the index entries are narrower (−12 % Postgres CPU a retrieval at 100 000
-- fragments against (seq, ordinal)).
CREATE TABLE knowledge_postings (
  term     bigint NOT NULL,
  doc      bigint NOT NULL,
  tf       smallint NOT NULL,
  len      integer NOT NULL,
  impact   real NOT NULL,
  PRIMARY KEY (doc, term) INCLUDE (tf, len)
);
CREATE INDEX knowledge_postings_impact_idx ON knowledge_postings (term, impact DESC) INCLUDE (doc, tf, len);

-- Terms deleted, however (a bot's by cascade, a word no fragment has any more): their postings go too. Once per
-- statement, over the deleted rows.
CREATE FUNCTION knowledge_postings_forget_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM knowledge_postings p USING gone g WHERE p.term = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER knowledge_postings_forget_terms AFTER DELETE ON knowledge_terms
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION knowledge_postings_forget_terms();

CREATE TEMPORARY TABLE bm25f_words ON COMMIT DROP AS
  SELECT f.bot_id, s.seq, f.ordinal, u.lexeme,
         coalesce(array_length(u.positions, 1), 1) + coalesce(array_length(array_positions(u.weights, 'C'), 1), 0) AS tf
    FROM knowledge_fragments f
    JOIN knowledge_sources s ON s.bot_id = f.bot_id AND s.source_id = f.source_id
    CROSS JOIN LATERAL unnest(f.tsv) AS u;
CREATE TEMPORARY TABLE bm25f_lengths ON COMMIT DROP AS
  SELECT bot_id, seq, ordinal, sum(tf)::int AS len FROM bm25f_words GROUP BY bot_id, seq, ordinal;
INSERT INTO knowledge_stats (bot_id, fragments, length)
  SELECT bot_id, count(*), sum(len) FROM bm25f_lengths GROUP BY bot_id;
INSERT INTO knowledge_terms (bot_id, lexeme, df)
  SELECT bot_id, lexeme, count(*) FROM bm25f_words GROUP BY bot_id, lexeme;
INSERT INTO knowledge_postings (term, doc, tf, len, impact)
  SELECT t.id, b.seq * 16777216 + b.ordinal, b.tf, l.len,
         b.tf::float8 / (b.tf + 0.3::float8 + 0.9::float8 / greatest(s.length::float8 / s.fragments, 1) * l.len)
    FROM bm25f_words b
    JOIN bm25f_lengths l USING (bot_id, seq, ordinal)
    JOIN knowledge_terms t USING (bot_id, lexeme)
    JOIN knowledge_stats s USING (bot_id)
   ORDER BY t.id;
DROP TABLE bm25f_words, bm25f_lengths;

-- Down Migration
DROP TRIGGER knowledge_postings_forget_terms ON knowledge_terms;
DROP FUNCTION knowledge_postings_forget_terms();
DROP TABLE knowledge_postings;
DROP TABLE knowledge_terms;
TRUNCATE knowledge_stats;
-- As pg_catalog.russian maps them (the compounds removed from fragments by the up migration come back on rewrite).
ALTER TEXT SEARCH CONFIGURATION knowledge_search ADD MAPPING FOR asciihword WITH english_stem;
ALTER TEXT SEARCH CONFIGURATION knowledge_search ADD MAPPING FOR hword WITH russian_stem;
ALTER TEXT SEARCH CONFIGURATION knowledge_search ADD MAPPING FOR numhword WITH simple;
CREATE TABLE knowledge_terms (
  bot_id  text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  lexeme  text COLLATE "C" NOT NULL,
  df      integer NOT NULL CHECK (df > 0),
  PRIMARY KEY (bot_id, lexeme)
);
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
CREATE FUNCTION knowledge_postings_forget_bot() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM knowledge_postings WHERE bot_id = OLD.bot_id;
  RETURN NULL;
END $$;
CREATE TRIGGER knowledge_postings_forget_bot AFTER DELETE ON knowledge_stats
  FOR EACH ROW EXECUTE FUNCTION knowledge_postings_forget_bot();
CREATE TEMPORARY TABLE bm25f_words ON COMMIT DROP AS
  SELECT f.bot_id, s.seq, f.ordinal, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
    FROM knowledge_fragments f
    JOIN knowledge_sources s ON s.bot_id = f.bot_id AND s.source_id = f.source_id
    CROSS JOIN LATERAL unnest(f.tsv) AS u;
CREATE TEMPORARY TABLE bm25f_lengths ON COMMIT DROP AS
  SELECT bot_id, seq, ordinal, sum(tf)::int AS len FROM bm25f_words GROUP BY bot_id, seq, ordinal;
INSERT INTO knowledge_stats (bot_id, fragments, length)
  SELECT bot_id, count(*), sum(len) FROM bm25f_lengths GROUP BY bot_id;
INSERT INTO knowledge_terms (bot_id, lexeme, df)
  SELECT bot_id, lexeme, count(*) FROM bm25f_words GROUP BY bot_id, lexeme;
INSERT INTO knowledge_postings (bot_id, seq, ordinal, lexeme, tf, len, impact)
  SELECT b.bot_id, b.seq, b.ordinal, b.lexeme, b.tf, l.len,
         b.tf::float8 / (b.tf + 0.3::float8 + 0.9::float8 / greatest(s.length::float8 / s.fragments, 1) * l.len)
    FROM bm25f_words b JOIN bm25f_lengths l USING (bot_id, seq, ordinal) JOIN knowledge_stats s USING (bot_id);
DROP TABLE bm25f_words, bm25f_lengths;
