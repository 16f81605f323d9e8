-- Up Migration

-- One row per run of the siteScan workflow `scan/{botId}` (contract, Admin helpers → POST /v1/admin/scrape): what the
-- dashboard shows as progress, since the contract has no status endpoint. The crawl activity rewrites the counters after
-- every page; a retried attempt starts them again from zero.
CREATE TABLE site_scans (
  -- the Temporal run id of the scan: unique per run, known to both the API (start) and the activity
  id               text PRIMARY KEY,
  bot_id           text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  -- the start address, normalized (lib/crawl/crawler.ts normalizeUrl)
  url              text NOT NULL,
  trigger          text NOT NULL CHECK (trigger IN ('api', 'schedule')),
  status           text NOT NULL CHECK (status IN ('scanning', 'done', 'failed')),
  max_pages        integer NOT NULL,
  attempt          integer NOT NULL DEFAULT 1,
  pages_fetched    integer NOT NULL DEFAULT 0,
  pages_indexed    integer NOT NULL DEFAULT 0,
  pages_skipped    integer NOT NULL DEFAULT 0,
  pages_queued     integer NOT NULL DEFAULT 0,
  -- sources of pages that vanished from the site, removed after a complete re-read
  pages_removed    integer NOT NULL DEFAULT 0,
  -- count per skip reason of the crawler (robots, timeout, http_404, …)
  skipped_reasons  jsonb NOT NULL DEFAULT '{}',
  last_url         text,
  error            text,
  started_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE INDEX site_scans_bot_idx ON site_scans (bot_id, started_at DESC, id);

-- Which knowledge sources each scanned address produced (scan_key = sha1 of the normalized start URL), so a complete
-- re-read of one address removes only its own vanished pages, never those another address of the same site found.
-- Deleting the source (the integrator may, through the API) drops the link with it.
CREATE TABLE site_scan_pages (
  bot_id     text NOT NULL,
  scan_key   text NOT NULL,
  source_id  text NOT NULL,
  PRIMARY KEY (bot_id, scan_key, source_id),
  FOREIGN KEY (bot_id, source_id) REFERENCES knowledge_sources (bot_id, source_id) ON DELETE CASCADE
);
CREATE INDEX site_scan_pages_source_idx ON site_scan_pages (bot_id, source_id);

-- Down Migration
DROP TABLE site_scan_pages;
DROP TABLE site_scans;
