-- Up Migration
-- The operator's briefing (docs/decisions/062-operator-briefing.md): a short summary of the conversation, written
-- when it is handed to a person, shown at the top of the transcript and sent with `escalated`.
ALTER TABLE conversations ADD COLUMN briefing text;
ALTER TABLE conversations ADD COLUMN briefing_at timestamptz;

-- Down Migration
ALTER TABLE conversations DROP COLUMN briefing_at;
ALTER TABLE conversations DROP COLUMN briefing;
