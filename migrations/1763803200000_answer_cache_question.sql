-- Up Migration
-- The question an answer-cache entry answers (lib/runs/answer-cache.ts, questionKey: the normalized question and the
-- page), so that a turn's first statement can tell whether any entry could match before the full key — which needs
-- the conversation's history and the agent's settings — is known (docs/decisions/057-answer-cache.md). Entries
-- written before have none and are not read again; they expire within the cache's TTL.
ALTER TABLE answer_cache ADD COLUMN question_key bytea;
CREATE INDEX answer_cache_question_idx ON answer_cache (bot_id, question_key) WHERE question_key IS NOT NULL;

-- Down Migration
DROP INDEX answer_cache_question_idx;
ALTER TABLE answer_cache DROP COLUMN question_key;
