-- Up Migration

-- The conversation a stored idempotency response belongs to, so erasing a visitor erases it too.
ALTER TABLE idempotency_keys ADD COLUMN session_id text;
-- A key whose attempt failed is `open` for a retry (it was deleted before); `generation` counts failed attempts whose
-- turns are over, and chat turns derive their ids from (key, generation).
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_progress', 'done', 'open'));
ALTER TABLE idempotency_keys ADD COLUMN generation integer NOT NULL DEFAULT 0;
CREATE INDEX idempotency_keys_session_idx ON idempotency_keys (session_id) WHERE session_id IS NOT NULL;

-- Writes that span Postgres and Temporal converge: each change of a trigger's Schedule bumps `schedule_rev`; a
-- successful sync records it in `schedule_synced_rev`. The maintenance workflow re-syncs whatever lags.
ALTER TABLE triggers ADD COLUMN schedule_rev integer NOT NULL DEFAULT 1;
-- Existing triggers were synced when they were written; a new row starts unsynced until its Schedule exists.
ALTER TABLE triggers ADD COLUMN schedule_synced_rev integer NOT NULL DEFAULT 1;
ALTER TABLE triggers ALTER COLUMN schedule_synced_rev SET DEFAULT 0;
CREATE INDEX triggers_unsynced_idx ON triggers (updated_at) WHERE schedule_synced_rev < schedule_rev;

-- An approval decided in Postgres is delivered to the workflow waiting for it; until then the maintenance workflow
-- delivers it again.
ALTER TABLE action_approvals ADD COLUMN delivered_at timestamptz;
CREATE INDEX action_approvals_undelivered_idx ON action_approvals (decided_at) WHERE status <> 'pending' AND delivered_at IS NULL;

-- The refresh schedule each scanned address should have (the Temporal Schedule `scan-refresh/{bot}/{key}` follows).
CREATE TABLE scan_schedules (
  bot_id        text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  scan_key      text NOT NULL,
  workspace_id  text NOT NULL,
  url           text NOT NULL,
  max_pages     integer NOT NULL,
  refresh_days  integer NOT NULL CHECK (refresh_days >= 0),
  rev           integer NOT NULL DEFAULT 1,
  synced_rev    integer NOT NULL DEFAULT 0,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bot_id, scan_key)
);
CREATE INDEX scan_schedules_unsynced_idx ON scan_schedules (updated_at) WHERE synced_rev < rev;

-- Down Migration
DROP INDEX action_approvals_undelivered_idx;
ALTER TABLE action_approvals DROP COLUMN delivered_at;
DROP TABLE scan_schedules;
DROP INDEX triggers_unsynced_idx;
ALTER TABLE triggers DROP COLUMN schedule_synced_rev;
ALTER TABLE triggers DROP COLUMN schedule_rev;
DROP INDEX idempotency_keys_session_idx;
ALTER TABLE idempotency_keys DROP COLUMN session_id;
ALTER TABLE idempotency_keys DROP COLUMN generation;
DELETE FROM idempotency_keys WHERE state = 'open';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_progress', 'done'));
