-- Up Migration
-- The visitor's satisfaction with the help a person gave (docs/decisions/101-satisfaction.md): asked once a
-- conversation is resolved, one answer per resolution (a later one replaces it), kept on the conversation for reports
-- and as a `satisfaction` event in the operators' transcript.
ALTER TABLE conversations
  ADD COLUMN satisfaction_score smallint CHECK (satisfaction_score BETWEEN 1 AND 5),
  ADD COLUMN satisfaction_comment text,
  ADD COLUMN satisfaction_at timestamptz;

-- Down Migration
ALTER TABLE conversations
  DROP COLUMN satisfaction_score,
  DROP COLUMN satisfaction_comment,
  DROP COLUMN satisfaction_at;
