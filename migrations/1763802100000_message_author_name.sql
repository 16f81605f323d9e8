-- Up Migration
-- Who of the team wrote an operator's reply (docs/decisions/099-widget-look.md): the person's name when they
-- replied from the dashboard; null for replies through the operator API, which name no person.
ALTER TABLE messages ADD COLUMN author_name text;

-- Down Migration
ALTER TABLE messages DROP COLUMN author_name;
