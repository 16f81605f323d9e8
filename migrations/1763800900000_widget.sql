-- Up Migration

-- The visitor's widget (docs/widget.md, docs/decisions/076-widget-callers.md).

-- Origins whose pages may embed the bot's widget (CORS on /v1/widget/*): exact `scheme://host[:port]` strings. None
-- by default: an owner names the sites that may use the public key from a browser.
ALTER TABLE bots ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}';

-- Images visitors attach. The bytes live here (`data`) with the default store, or in an S3-compatible bucket under
-- the id (`store = 's3'`, `data` NULL). The id is the unguessable address `GET /media/{id}`. Rows go with their
-- conversation (visitor erase) or bot; objects in a bucket are deleted by the service before the rows.
CREATE TABLE media (
  id            text PRIMARY KEY,
  bot_id        text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  session_id    text NOT NULL REFERENCES conversations(session_id) ON DELETE CASCADE,
  content_type  text NOT NULL,
  size          integer NOT NULL CHECK (size > 0),
  width         integer,
  height        integer,
  sha256        bytea NOT NULL,
  store         text NOT NULL CHECK (store IN ('postgres', 's3')),
  data          bytea,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CHECK ((store = 'postgres') = (data IS NOT NULL))
);
CREATE INDEX media_session_idx ON media (session_id);
CREATE INDEX media_bot_idx ON media (bot_id);

-- A message may hold an image: `{id, content_type, size, width, height}` (the address is derived from the id).
ALTER TABLE messages ADD COLUMN attachment jsonb;

-- Down Migration

ALTER TABLE messages DROP COLUMN attachment;
DROP TABLE media;
ALTER TABLE bots DROP COLUMN allowed_origins;
