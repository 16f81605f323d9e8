-- Up Migration
-- Keys that outlive their holder (docs/decisions/142-keys-outlive-holders.md): who was shown which secret, so that when a
-- person leaves the team or stops being an admin, the keys they saw and that still work are listed and rotated in one
-- action (or at once, by the workspace's setting). Never the secret: what it was (bot, kind), its fingerprint, when.
CREATE TABLE key_exposures (
  id            bigserial PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  -- null: a key of the whole workspace (a builder key issued in the builder panel)
  bot_id        text REFERENCES bots(id) ON DELETE CASCADE,
  -- No reference: the record outlives the person's account (a removal is when it is read).
  user_id       text NOT NULL,
  email         text NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('secret', 'identity', 'webhook', 'builder')),
  -- secret and builder: the key shown (in force while it is not revoked)
  api_key_id    text REFERENCES api_keys(id) ON DELETE CASCADE,
  fingerprint   text NOT NULL,
  shown_at      timestamptz NOT NULL DEFAULT now(),
  -- identity and webhook: set when the bot's secret of that kind is reissued (the one shown stops working)
  superseded_at timestamptz,
  CHECK ((kind IN ('secret', 'builder')) = (api_key_id IS NOT NULL))
);
CREATE INDEX key_exposures_workspace_idx ON key_exposures (workspace_id, user_id) WHERE superseded_at IS NULL;
CREATE INDEX key_exposures_bot_idx ON key_exposures (bot_id, kind) WHERE superseded_at IS NULL;
CREATE INDEX key_exposures_api_key_idx ON key_exposures (api_key_id);

-- Keys on record with the person who issued them were shown to that person (a pairing's key went to the client, not
-- to the approver). The visitor identity and webhook secrets of older agents have no such record.
INSERT INTO key_exposures (workspace_id, bot_id, user_id, email, kind, api_key_id, fingerprint, shown_at)
SELECT k.workspace_id, k.bot_id, u.id, u.email, k.kind, k.id, k.fingerprint, k.created_at
  FROM api_keys k JOIN users u ON u.id = k.issued_by
 WHERE k.revoked_at IS NULL AND k.kind IN ('secret', 'builder') AND k.issued_via IS DISTINCT FROM 'pairing';

-- Whether the keys a departing person saw are rotated at once (true), or listed with "rotate them all" (the default).
ALTER TABLE workspaces ADD COLUMN rotate_keys_on_departure boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE workspaces DROP COLUMN rotate_keys_on_departure;
DROP TABLE key_exposures;
