-- Up Migration

-- A workspace is the billing and team unit: it owns users, bots and (later) credits and quotas.
CREATE TABLE workspaces (
  id                          text PRIMARY KEY,
  name                        text NOT NULL,
  monthly_conversation_quota  integer NOT NULL DEFAULT 1000 CHECK (monthly_conversation_quota >= 0),
  created_at                  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id             text PRIMARY KEY,
  workspace_id   text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  email          text NOT NULL,
  password_hash  text NOT NULL,
  role           text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'member')),
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- A bot is an agent. Its signing secrets are stored sealed (AES-GCM, see lib/secret-box.ts) because the platform
-- must use them again; its API keys live in api_keys as hashes only.
CREATE TABLE bots (
  id                            text PRIMARY KEY,
  workspace_id                  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name                          text NOT NULL,
  instructions                  text NOT NULL DEFAULT '',
  model                         text,
  handoff_enabled               boolean NOT NULL DEFAULT true,
  handoff_webhook_url           text,
  public_key                    text NOT NULL UNIQUE,
  webhook_secret_sealed         text NOT NULL,
  webhook_secret_fingerprint    text NOT NULL,
  identity_secret_sealed        text NOT NULL,
  identity_secret_fingerprint   text NOT NULL,
  created_at                    timestamptz NOT NULL DEFAULT now(),
  updated_at                    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bots_workspace_idx ON bots (workspace_id);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id        text REFERENCES bots(id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('secret', 'builder', 'access')),
  key_hash      bytea NOT NULL UNIQUE,
  fingerprint   text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX api_keys_bot_kind_idx ON api_keys (bot_id, kind) WHERE revoked_at IS NULL;

-- Down Migration
DROP TABLE api_keys;
DROP TABLE bots;
DROP TABLE users;
DROP TABLE workspaces;
