-- Up Migration

-- Upload quotas and retention of visitors' images (docs/decisions/108-upload-quotas.md): a bot's bytes
-- of the last 24 hours are summed on every upload, and the maintenance schedule deletes images past their retention
-- oldest first. (Models per plan need no schema: the catalogue is code, lib/billing/models.ts.)
CREATE INDEX media_bot_created_idx ON media (bot_id, created_at);
CREATE INDEX media_created_idx ON media (created_at);

-- Down Migration

DROP INDEX media_created_idx;
DROP INDEX media_bot_created_idx;
