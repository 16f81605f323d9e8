-- Up Migration
-- An agent's business hours (docs/decisions/061-business-hours.md): null is always open. A conversation handed over
-- outside them was told when the team is back (team_back_at; null when no window ever opens) and asked for a contact.
ALTER TABLE bots ADD COLUMN business_hours jsonb;
ALTER TABLE conversations ADD COLUMN after_hours boolean NOT NULL DEFAULT false;
ALTER TABLE conversations ADD COLUMN team_back_at timestamptz;

-- Down Migration
ALTER TABLE conversations DROP COLUMN team_back_at;
ALTER TABLE conversations DROP COLUMN after_hours;
ALTER TABLE bots DROP COLUMN business_hours;
