-- Up Migration
-- How the widget looks on the integrator's site (docs/decisions/099-widget-look.md): accent colour, greeting,
-- launcher side, the team's name on people's replies and an avatar. Only what the owner set is stored; the API fills
-- the defaults.
ALTER TABLE bots ADD COLUMN widget_look jsonb NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE bots DROP COLUMN widget_look;
