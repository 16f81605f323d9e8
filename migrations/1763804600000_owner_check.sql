-- Up Migration

-- The owner's check of an agent (issue 41, item 7; docs/decisions/155-owner-check.md): test questions, each with the
-- knowledge source that should answer it, and runs of the check that put every question through the chat's retrieval.

-- The expected source is named by its id, not by a foreign key: a source deleted later leaves its question, and the
-- next check says "the source no longer exists" instead of the question vanishing with it.
CREATE TABLE check_questions (
  id                  text PRIMARY KEY,
  bot_id              text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  question            text NOT NULL,
  expected_source_id  text NOT NULL,
  note                text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
-- One wording once per agent (case and spacing aside): the same question twice would count twice in the score.
CREATE UNIQUE INDEX check_questions_wording_key ON check_questions (bot_id, lower(regexp_replace(question, '\s+', ' ', 'g')));
CREATE INDEX check_questions_bot_idx ON check_questions (bot_id, created_at, id);

-- One row per run of the knowledgeCheck workflow `knowledge-check/{botId}/{id}`. `checked` and `found` are rewritten
-- with every batch of questions checked: the dashboard's progress while it runs, the score once done.
CREATE TABLE check_runs (
  id           text PRIMARY KEY,
  bot_id       text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  status       text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  total        integer NOT NULL CHECK (total > 0),
  checked      integer NOT NULL DEFAULT 0,
  found        integer NOT NULL DEFAULT 0,
  -- questions whose expected source no longer existed when checked
  missing      integer NOT NULL DEFAULT 0,
  error        text,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX check_runs_bot_idx ON check_runs (bot_id, started_at DESC, id);
-- One run at a time per agent: a second start is the API's 409.
CREATE UNIQUE INDEX check_runs_one_running ON check_runs (bot_id) WHERE status = 'running';

-- A run's questions as they were when it started (later edits and deletes do not rewrite a past check), and what each
-- one found: `outcome` is NULL until its question is checked.
CREATE TABLE check_results (
  run_id              text NOT NULL REFERENCES check_runs(id) ON DELETE CASCADE,
  question_id         text NOT NULL,
  ordinal             integer NOT NULL,
  question            text NOT NULL,
  expected_source_id  text NOT NULL,
  outcome             text CHECK (outcome IN ('found', 'not_found', 'source_missing')),
  -- 1–5: where the expected source's first passage came among the passages a chat turn gets
  rank                integer,
  -- the passages retrieval returned, in order: source id, title, url, heading path, page, an excerpt of the text
  passages            jsonb NOT NULL DEFAULT '[]',
  checked_at          timestamptz,
  PRIMARY KEY (run_id, question_id),
  CHECK ((outcome = 'found') = (rank IS NOT NULL))
);
CREATE INDEX check_results_pending_idx ON check_results (run_id, ordinal) WHERE outcome IS NULL;

-- Down Migration

DROP TABLE check_results;
DROP TABLE check_runs;
DROP TABLE check_questions;
