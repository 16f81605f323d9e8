-- Up Migration

-- What a run read (docs/decisions/153-see-what-the-agent-reads.md): the passages its model was given, best first, each
-- as it was then (source id, title, heading path, page, score and the text the model read: knowledge changes after),
-- and the question it searched with when that was not its input (a follow-up searched in context:
-- docs/decisions/152-questions-in-context.md). Written with the run's outcome, in the same statement; NULL for runs
-- before this column and for runs that read no knowledge.
ALTER TABLE runs
  ADD COLUMN passages jsonb,
  ADD COLUMN searched_with text;

-- Down Migration
ALTER TABLE runs
  DROP COLUMN searched_with,
  DROP COLUMN passages;
