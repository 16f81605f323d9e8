-- Up Migration
-- What is missing (docs/decisions/063-what-is-missing.md): a chat turn the agent could not answer keeps how it ended
-- (offer, hand_over, said), so the owner sees the questions grouped; `gap_source_id` is the knowledge source the
-- owner wrote to answer it (the question then leaves the list).
ALTER TABLE runs ADD COLUMN unanswered text CHECK (unanswered IN ('offer', 'hand_over', 'said'));
ALTER TABLE runs ADD COLUMN gap_source_id text;
CREATE INDEX runs_unanswered_idx ON runs (bot_id, started_at DESC) WHERE unanswered IS NOT NULL AND gap_source_id IS NULL;

-- Down Migration
DROP INDEX runs_unanswered_idx;
ALTER TABLE runs DROP COLUMN gap_source_id;
ALTER TABLE runs DROP COLUMN unanswered;
