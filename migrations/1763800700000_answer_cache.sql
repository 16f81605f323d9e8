-- Up Migration

-- The bot's answer cache (contract, Knowledge source write: "the bot's answer cache is reset"). The key hashes what an
-- answer depends on — knowledge version, model, instructions, the normalized question, page context and the
-- conversation so far (lib/runs/answer-cache.ts) — so a knowledge write or a settings change makes old entries
-- unreachable; `expires_at` bounds the rest. The maintenance workflow removes expired entries.
CREATE TABLE answer_cache (
  bot_id      text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  key         bytea NOT NULL,
  answer      text NOT NULL,
  model       text NOT NULL,
  run_id      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (bot_id, key)
);
CREATE INDEX answer_cache_expires_idx ON answer_cache (expires_at);

-- Down Migration
DROP TABLE answer_cache;
