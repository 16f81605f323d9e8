-- Up Migration
-- A scan an owner stopped (docs/decisions/034-scan-errors-and-cancel.md) and why a scan
-- found nothing, as a code the dashboard words for people (the crawler's start-page reason, no_text, cancelled).
ALTER TABLE site_scans DROP CONSTRAINT site_scans_status_check;
ALTER TABLE site_scans ADD CONSTRAINT site_scans_status_check CHECK (status IN ('scanning', 'done', 'failed', 'cancelled'));
ALTER TABLE site_scans ADD COLUMN error_code text;

-- Down Migration
ALTER TABLE site_scans DROP COLUMN error_code;
UPDATE site_scans SET status = 'failed' WHERE status = 'cancelled';
ALTER TABLE site_scans DROP CONSTRAINT site_scans_status_check;
ALTER TABLE site_scans ADD CONSTRAINT site_scans_status_check CHECK (status IN ('scanning', 'done', 'failed'));
