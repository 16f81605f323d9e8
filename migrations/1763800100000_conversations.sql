-- Up Migration

-- One row per conversation session. `session_id` is unique across bots: the session is bound to the bot that
-- used it first (contract, Conversation session), and another bot's key never sees it.
CREATE TABLE conversations (
  session_id             text PRIMARY KEY,
  bot_id                 text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  workspace_id           text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  -- 'bot' (the bot answers), 'waiting' (handed off, no operator yet), 'operator' (an operator replied)
  status                 text NOT NULL DEFAULT 'bot' CHECK (status IN ('bot', 'waiting', 'operator')),
  visitor_user           text,
  operator_seen_at       timestamptz,
  operator_typing_until  timestamptz,
  visitor_typing_until   timestamptz,
  escalated_at           timestamptz,
  resolved_at            timestamptz,
  last_message_at        timestamptz NOT NULL DEFAULT now(),
  created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_bot_status_idx ON conversations (bot_id, status, last_message_at DESC);
CREATE INDEX conversations_visitor_idx ON conversations (bot_id, visitor_user) WHERE visitor_user IS NOT NULL;

-- Messages in the order they happened. `seq` orders them and is what poll cursors point at.
CREATE TABLE messages (
  seq         bigserial PRIMARY KEY,
  id          text NOT NULL UNIQUE,
  session_id  text NOT NULL REFERENCES conversations(session_id) ON DELETE CASCADE,
  bot_id      text NOT NULL,
  author      text NOT NULL,
  text        text NOT NULL DEFAULT '',
  event       jsonb,
  at          bigint NOT NULL
);
-- The hottest path (GET /v1/api/messages) reads by session after a cursor.
CREATE INDEX messages_session_seq_idx ON messages (session_id, seq);

-- Idempotency keys, scoped to the API key that sent them, kept 24 hours (contract, Idempotency).
CREATE TABLE idempotency_keys (
  api_key_id        text NOT NULL,
  idempotency_key   text NOT NULL,
  request_hash      bytea NOT NULL,
  state             text NOT NULL CHECK (state IN ('in_progress', 'done')),
  response_status   integer,
  response_headers  jsonb,
  response_body     bytea,
  created_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Fixed one-minute rate windows per (key + IP + group), shared by every API replica.
-- UNLOGGED: counters of one-minute windows need no crash safety, and skipping the WAL keeps the hottest write cheap.
CREATE UNLOGGED TABLE rate_windows (
  bucket        text NOT NULL,
  window_start  timestamptz NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);

-- Down Migration
DROP TABLE rate_windows;
DROP TABLE idempotency_keys;
DROP TABLE messages;
DROP TABLE conversations;
