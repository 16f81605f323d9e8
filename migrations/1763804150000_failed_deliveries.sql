-- Up Migration
-- A delivery given up can be sent again from the agent's page (docs/decisions/144-failed-deliveries-told.md): a new
-- delivery of the same body, which names the one it sends again. At most one of those is under way or delivered at a
-- time (the unique index is the lock a second click meets); one that failed too leaves room for the next.
ALTER TABLE webhook_deliveries ADD COLUMN resend_of text REFERENCES webhook_deliveries(id) ON DELETE SET NULL;
CREATE UNIQUE INDEX webhook_deliveries_resend_live_idx ON webhook_deliveries (resend_of)
  WHERE status IN ('pending', 'delivered');
CREATE INDEX webhook_deliveries_resend_idx ON webhook_deliveries (resend_of) WHERE resend_of IS NOT NULL;
-- The agent's page lists what was given up lately, newest first.
CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (bot_id, finished_at DESC) WHERE status = 'failed';

-- Down Migration
DROP INDEX webhook_deliveries_failed_idx;
DROP INDEX webhook_deliveries_resend_idx;
DROP INDEX webhook_deliveries_resend_live_idx;
ALTER TABLE webhook_deliveries DROP COLUMN resend_of;
