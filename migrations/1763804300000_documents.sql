-- Up Migration

-- Documents in, and passages that keep their context (docs/decisions/145-documents-in.md, 146-passages-keep-context.md).

-- A source may be a file an owner uploaded (`origin = 'file'`). A file is read by a workflow after the upload is
-- answered: its source is `reading` until its passages are indexed (in one transaction), or `failed` with a reason
-- for its owner. Texts and scanned pages are indexed before their write returns: always `indexed`.
ALTER TABLE knowledge_sources DROP CONSTRAINT knowledge_sources_origin_check;
ALTER TABLE knowledge_sources ADD CONSTRAINT knowledge_sources_origin_check CHECK (origin IN ('api', 'scan', 'file'));
ALTER TABLE knowledge_sources
  ADD COLUMN status text NOT NULL DEFAULT 'indexed' CHECK (status IN ('reading', 'indexed', 'failed')),
  ADD COLUMN reason text;

-- Each passage's place in its document: the headings it sits under (outermost first) and its page (paged formats).
-- The heading path's words are also in `tsv` at weight C, as the title's are, so ranking uses them.
ALTER TABLE knowledge_fragments
  ADD COLUMN heading_path text[] NOT NULL DEFAULT '{}',
  ADD COLUMN page integer;

-- The original of a file source, as uploaded (downloadable from the dashboard and the API). The bytes live here
-- (`data`) with the default store, or in the S3-compatible bucket of MEDIA_STORE=s3 under the upload's key. One row
-- per source: a new upload of the source replaces it, and `upload_id` changes, so the index write of a reading that
-- an upload has since superseded finds its upload gone and writes nothing.
CREATE TABLE knowledge_files (
  bot_id        text NOT NULL,
  source_id     text NOT NULL,
  upload_id     text NOT NULL UNIQUE,
  name          text NOT NULL,
  -- the title the uploader gave, if any (else the document's own, else the file name)
  title         text,
  -- what the bytes are (sniffed), not what the client declared
  format        text NOT NULL CHECK (format IN ('pdf', 'docx', 'html', 'markdown', 'csv', 'text')),
  content_type  text NOT NULL,
  size          integer NOT NULL CHECK (size > 0),
  sha256        bytea NOT NULL,
  pages         integer,
  store         text NOT NULL CHECK (store IN ('postgres', 's3')),
  data          bytea,
  uploaded_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bot_id, source_id),
  FOREIGN KEY (bot_id, source_id) REFERENCES knowledge_sources (bot_id, source_id) ON DELETE CASCADE,
  CHECK ((store = 'postgres') = (data IS NOT NULL))
);
-- "The same file name again replaces its source": found by name within the bot.
CREATE INDEX knowledge_files_name_idx ON knowledge_files (bot_id, name);

-- Down Migration

DROP TABLE knowledge_files;
ALTER TABLE knowledge_fragments DROP COLUMN page, DROP COLUMN heading_path;
ALTER TABLE knowledge_sources DROP COLUMN reason, DROP COLUMN status;
DELETE FROM knowledge_sources WHERE origin = 'file';
ALTER TABLE knowledge_sources DROP CONSTRAINT knowledge_sources_origin_check;
ALTER TABLE knowledge_sources ADD CONSTRAINT knowledge_sources_origin_check CHECK (origin IN ('api', 'scan'));
