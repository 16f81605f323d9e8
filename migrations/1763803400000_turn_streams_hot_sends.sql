-- Up Migration
-- A stream's row is rewritten every coalescing window, about sixteen times a turn (lib/streams.ts). Its send also set
-- `updated_at`, which the hourly cleanup's index covers, so no send could be a HOT update: each one added an entry
-- to both indexes and left a dead tuple behind (none of 28 854 sends at 150 visitors was HOT). The cleanup now goes
-- by when the stream was claimed, which sends do not change, and each page keeps half its room for the rows' next
-- versions. `updated_at` stays, unindexed, for workers of the previous release during a rolling deploy (they still
-- set it); a later migration may drop it.
ALTER TABLE turn_streams ADD COLUMN claimed_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX turn_streams_claimed_idx ON turn_streams (claimed_at);
DROP INDEX turn_streams_updated_idx;
ALTER TABLE turn_streams SET (fillfactor = 50);

-- Down Migration
ALTER TABLE turn_streams RESET (fillfactor);
CREATE INDEX turn_streams_updated_idx ON turn_streams (updated_at);
DROP INDEX turn_streams_claimed_idx;
ALTER TABLE turn_streams DROP COLUMN claimed_at;
