-- Up Migration
-- When each person last used the dashboard (docs/decisions/100-team-presence.md): written by the session check
-- at most every 30 s, read by the widget to tell a visitor asking for a person whether anyone is there to answer.
ALTER TABLE users ADD COLUMN last_active_at timestamptz;
CREATE INDEX users_workspace_active_idx ON users (workspace_id, last_active_at DESC);

-- Down Migration
DROP INDEX users_workspace_active_idx;
ALTER TABLE users DROP COLUMN last_active_at;
