-- Up Migration
-- The request that owns an `in_progress` Idempotency-Key renews this lease while it runs (docs/decisions/051-idempotent-chat-turns.md):
-- a key whose owner died is taken over once the lease lapses, in seconds.
ALTER TABLE idempotency_keys ADD COLUMN lease_until timestamptz;

-- Down Migration
ALTER TABLE idempotency_keys DROP COLUMN lease_until;
