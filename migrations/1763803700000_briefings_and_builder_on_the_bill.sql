-- Up Migration
-- The platform's model outside a run is on the workspace's bill (docs/decisions/137-briefings-and-builder-on-the-bill.md):
-- a model-written operator's briefing and a builder turn are charged like runs, as ledger entries that are not runs.
-- `charge_key` makes each one charge once whatever retries happen (`briefing:<delivery id>`, `builder:<turn id>`), as
-- `run_id` does for runs.
ALTER TABLE credit_ledger ADD COLUMN charge_key text UNIQUE;

-- Who wrote the briefing: the model (`model`, labelled as such where operators and webhooks read it) or the platform
-- quoting the conversation (`extractive`). Briefings written before are told apart by the extractive one's fixed shape.
ALTER TABLE conversations ADD COLUMN briefing_source text CHECK (briefing_source IN ('model', 'extractive'));
UPDATE conversations
   SET briefing_source = CASE WHEN briefing LIKE 'Asked: “%' OR briefing = 'The visitor asked for a person before writing anything.'
                              THEN 'extractive' ELSE 'model' END
 WHERE briefing IS NOT NULL;

-- Down Migration
ALTER TABLE conversations DROP COLUMN briefing_source;
ALTER TABLE credit_ledger DROP COLUMN charge_key;
