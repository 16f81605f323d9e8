-- Up Migration
-- Where a bot's widget was seen (docs/decisions/102-widget-sightings.md): each page origin that loaded it or was
-- refused, so the dashboard can say "installed on" and "blocked on" instead of leaving the owner a CORS error in a
-- visitor's console. Written at most once a minute per bot and origin by each API process; at most 50 origins a bot.
CREATE TABLE widget_sightings (
  bot_id text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  origin text NOT NULL,
  last_allowed_at timestamptz,  -- the last request from this origin the widget served
  last_refused_at timestamptz,  -- the last one refused (origin_not_allowed, or a preflight answered without CORS)
  PRIMARY KEY (bot_id, origin)
);

-- Down Migration
DROP TABLE widget_sightings;
