-- Up Migration
-- Sightings expire (docs/decisions/134-widget-preflight-budget.md): the dashboard lists those seen in the last 30 days, a
-- bot's write removes its older ones, and the maintenance run removes the rest by this index.
CREATE INDEX widget_sightings_seen ON widget_sightings ((GREATEST(last_allowed_at, last_refused_at)));

-- Down Migration
DROP INDEX widget_sightings_seen;
