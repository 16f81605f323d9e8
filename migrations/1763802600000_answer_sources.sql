-- Up Migration
-- The knowledge sources an answer used (docs/decisions/058-answers-cite-sources.md): on the bot's message, for
-- transcripts and the widget, and on a cached answer, which is given again with the same sources.
ALTER TABLE messages ADD COLUMN sources jsonb;
ALTER TABLE answer_cache ADD COLUMN sources jsonb;

-- Down Migration
ALTER TABLE answer_cache DROP COLUMN sources;
ALTER TABLE messages DROP COLUMN sources;
