-- Up Migration
-- Sites as owners have them (docs/decisions/151-sitemaps-and-path-patterns.md): a scan's include and exclude path
-- patterns, kept with each scan and with the address's refresh schedule (so a re-read keeps them), and how many page
-- addresses a scan took from the site's sitemaps.
ALTER TABLE site_scans
  ADD COLUMN include      text[] NOT NULL DEFAULT '{}',
  ADD COLUMN exclude      text[] NOT NULL DEFAULT '{}',
  ADD COLUMN sitemap_urls integer NOT NULL DEFAULT 0;
ALTER TABLE scan_schedules
  ADD COLUMN include text[] NOT NULL DEFAULT '{}',
  ADD COLUMN exclude text[] NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE scan_schedules DROP COLUMN exclude, DROP COLUMN include;
ALTER TABLE site_scans DROP COLUMN sitemap_urls, DROP COLUMN exclude, DROP COLUMN include;
