-- Up Migration

-- btree_gin lets one GIN index hold both the bot id and the text-search vector, so "this bot's fragments matching
-- these words" is a single index scan, however many other bots share the table. Trusted since Postgres 13: the
-- database owner may create it without superuser.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- The search configuration for knowledge. Postgres' built-in `russian` configuration stems Latin-letter words with
-- the English Snowball stemmer and every other word with the Russian one, each with its own stopword list, so one
-- vector serves English and Russian; words of other scripts pass through unchanged and match by exact form. A named
-- copy lets us tune it later (dictionaries, synonyms) without touching the queries. Case folding, accent folding
-- and CJK bigrams happen before Postgres sees the text (lib/knowledge/normalize.ts): with a C locale Postgres does
-- not lowercase non-ASCII letters.
CREATE TEXT SEARCH CONFIGURATION knowledge_search (COPY = pg_catalog.russian);

-- A question as a tsquery: the OR of its lexemes, so any fragment sharing a content word is a candidate and ranking
-- prefers those sharing more (stopwords are already gone: "what", "is", "the", "как"). Each lexeme of five or more
-- letters also matches as a prefix without its last letter: Snowball stems some forms of one word differently
-- (талисман → талисма, талисманом → талисман; ресторан / ресторане), and an exact match still counts twice in
-- ts_rank, so it stays ahead of a near form. Lexemes are quoted (quotes and backslashes doubled) so nothing in them
-- is an operator. IMMUTABLE (like to_tsvector with a fixed configuration), so the planner folds it into a constant
-- for each query and estimates its selectivity from the column statistics. NULL when nothing is left to search.
CREATE FUNCTION knowledge_tsquery(search text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg(item, ' | ')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('knowledge_search', search))) AS lexeme,
         LATERAL (SELECT '''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''' AS item
                  UNION ALL
                  SELECT '''' || replace(replace(left(lexeme, -1), '\', '\\'), '''', '''''') || ''':*'
                   WHERE char_length(lexeme) >= 5 AND lexeme !~ '[[:digit:][:punct:]]') AS items
$$;

-- "The bot's answer cache reset" (contract, Knowledge source write): every write or delete bumps it in the same
-- transaction; answer caches key on (bot, knowledge_version), so an old entry is never read again.
ALTER TABLE bots ADD COLUMN knowledge_version bigint NOT NULL DEFAULT 0;

-- One row per source: the full text as written, plus what listing needs without touching fragments.
CREATE TABLE knowledge_sources (
  bot_id          text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  -- chosen by the integrator, or generated (`src_…`); unique per bot, not globally
  source_id       text NOT NULL,
  -- creation order, kept across updates: the keyset for stable pagination
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  title           text NOT NULL,
  text            text NOT NULL,
  origin          text NOT NULL CHECK (origin IN ('api', 'scan')),
  url             text,
  -- sha256 over (index version, title, text): an unchanged rewrite (a site re-scan) skips re-indexing
  content_hash    bytea NOT NULL,
  fragment_count  integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bot_id, source_id)
);
CREATE UNIQUE INDEX knowledge_sources_list_idx ON knowledge_sources (bot_id, seq);

-- Retrieval units. `tsv` is computed at insert from the normalized fragment and title (not a generated column:
-- the normalization is Unicode-aware JavaScript). `embedding`, when present, is unit length, so cosine similarity
-- is a dot product; `embedding_bits` holds its signs (binary quantization): plain Postgres has no vector index, so
-- the semantic branch ranks by Hamming distance over these bits first (cheap) and computes exact cosine only for
-- the closest few hundred. With pgvector available, an HNSW index would replace both.
CREATE TABLE knowledge_fragments (
  bot_id          text NOT NULL,
  source_id       text NOT NULL,
  ordinal         integer NOT NULL,
  text            text NOT NULL,
  tsv             tsvector NOT NULL,
  embedding       real[],
  embedding_bits  bit varying,
  PRIMARY KEY (bot_id, source_id, ordinal),
  FOREIGN KEY (bot_id, source_id) REFERENCES knowledge_sources (bot_id, source_id) ON DELETE CASCADE
);
-- The retrieval index: `bot_id = $1 AND tsv @@ query` in one bitmap index scan. New entries collect in GIN's pending
-- list and are merged in bulk, which keeps writes about 3x faster than fastupdate = off (5 MiB of prose: 3 s instead
-- of 6.5 s); the list is kept small (256 kB instead of 4 MB) because every search scans it linearly, and because the
-- planner shuns the index while a long list is pending.
CREATE INDEX knowledge_fragments_search_idx ON knowledge_fragments USING gin (bot_id, tsv)
  WITH (fastupdate = on, gin_pending_list_limit = 256);

-- Down Migration
DROP TABLE knowledge_fragments;
DROP TABLE knowledge_sources;
DROP FUNCTION knowledge_tsquery(text);
ALTER TABLE bots DROP COLUMN knowledge_version;
DROP TEXT SEARCH CONFIGURATION knowledge_search;
-- btree_gin stays installed: dropping an extension other objects may use is not this migration's call.
