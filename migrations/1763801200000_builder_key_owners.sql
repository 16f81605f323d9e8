-- Up Migration

-- Who issued a key and for which device (docs/decisions/106-builder-key-issuers.md): a key
-- must not outlive the person who made it. `issued_by` is the signed-in person who issued it (dashboard, builder
-- panel, pairing approval), NULL for keys issued by an API call or a command (agentctl) and for keys older than this
-- column. The reference never deletes a key: removing a person revokes their builder keys first, in the same
-- transaction. `label` names the device (a paired client's name) or the surface it came from. `last_used_at` is
-- written at most once a minute by the key check, for builder keys only (they are the ones listed).
ALTER TABLE api_keys ADD COLUMN issued_by text REFERENCES users(id) ON DELETE SET NULL;
ALTER TABLE api_keys ADD COLUMN label text;
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
CREATE INDEX api_keys_issued_by_idx ON api_keys (issued_by) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_workspace_kind_idx ON api_keys (workspace_id, kind) WHERE revoked_at IS NULL;

-- Keys from pairings still on record: the owner who approved them, and the client's device name.
UPDATE api_keys k SET issued_by = p.approved_by, label = p.device
  FROM builder_pairings p WHERE p.api_key_id = k.id;

-- Down Migration

DROP INDEX api_keys_workspace_kind_idx;
DROP INDEX api_keys_issued_by_idx;
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE api_keys DROP COLUMN label;
ALTER TABLE api_keys DROP COLUMN issued_by;
