-- Up Migration

-- Builder key pairing (contract, Builder key pairing; docs/decisions/067-pairing-flow.md): a client starts a pairing, a signed-in owner
-- approves its code on the dashboard page /connect, and the client collects the issued builder key once with its
-- secret. The code is the 8 characters without the dash (`ABCDEFGH` for `ABCD-EFGH`); the secret is kept as a hash.
CREATE TABLE builder_pairings (
  code          text PRIMARY KEY,
  secret_hash   bytea NOT NULL,
  device        text NOT NULL,
  -- pending → approved → collected; an approved key never collected before expiry is revoked: lapsed.
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'collected', 'lapsed')),
  workspace_id  text REFERENCES workspaces(id) ON DELETE CASCADE,
  approved_by   text REFERENCES users(id) ON DELETE SET NULL,
  -- The key issued at approval: revoked if the client never collects it before the pairing expires.
  api_key_id    text REFERENCES api_keys(id) ON DELETE SET NULL,
  -- The issued key, sealed (AES-GCM, lib/secret-box.ts), only between approval and collection.
  key_sealed    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  approved_at   timestamptz,
  collected_at  timestamptz,
  CHECK ((status = 'approved') = (key_sealed IS NOT NULL))
);
CREATE INDEX builder_pairings_expires_idx ON builder_pairings (expires_at);

-- Keys issued through pairing belong to the workspace, not to one bot (bot_id NULL); say how each key came to be:
-- 'pairing' for a key collected through /v1/mcp-pair, 'builder' for one the builder issued when asked; NULL for the
-- keys made before this column.
ALTER TABLE api_keys ADD COLUMN issued_via text;

-- Down Migration
ALTER TABLE api_keys DROP COLUMN issued_via;
DROP TABLE builder_pairings;
