-- Up Migration

-- Dashboard sessions (contract: /v1/dashboard/* is authenticated by a user session; login at POST /v1/auth/login).
CREATE TABLE user_sessions (
  token_hash    bytea PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX user_sessions_expires_idx ON user_sessions (expires_at);

-- Credits: a balance per workspace, and a ledger that explains it (grants positive, run charges negative).
ALTER TABLE workspaces ADD COLUMN credit_balance integer NOT NULL DEFAULT 0;
CREATE TABLE credit_ledger (
  id            bigserial PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  amount        integer NOT NULL,
  reason        text NOT NULL,
  -- one charge per run, whatever retries happen
  run_id        text UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_ledger_workspace_idx ON credit_ledger (workspace_id, created_at DESC);

-- Triggers wake an agent: webhook, schedule, poll, manual (message triggers are chat turns).
CREATE TABLE triggers (
  id                       text PRIMARY KEY,
  bot_id                   text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  workspace_id             text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  kind                     text NOT NULL CHECK (kind IN ('webhook', 'schedule', 'poll', 'manual')),
  name                     text NOT NULL,
  task                     text NOT NULL,
  mode                     text NOT NULL DEFAULT 'ack' CHECK (mode IN ('ack', 'wait')),
  enabled                  boolean NOT NULL DEFAULT true,
  -- why a disabled trigger is off: 'owner' (turned off by hand) or 'failures' (paused after failed runs)
  disabled_reason          text,
  secret_sealed            text,
  secret_fingerprint       text,
  schedule_cron            text,
  every_seconds            integer CHECK (every_seconds IS NULL OR every_seconds >= 1),
  poll_url                 text,
  poll_last_hash           text,
  consecutive_failures     integer NOT NULL DEFAULT 0,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  deleted_at               timestamptz
);
CREATE INDEX triggers_bot_idx ON triggers (bot_id) WHERE deleted_at IS NULL;

-- Notifications to the owner (trigger paused, approval waiting); e-mailed too when SMTP is configured.
CREATE TABLE notifications (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id        text REFERENCES bots(id) ON DELETE CASCADE,
  kind          text NOT NULL,
  title         text NOT NULL,
  body          text NOT NULL,
  data          jsonb NOT NULL DEFAULT '{}',
  emailed_at    timestamptz,
  read_at       timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_workspace_idx ON notifications (workspace_id, created_at DESC);

-- Agent state: one JSON document per bot, read and written by its runs, versioned for optimistic concurrency.
CREATE TABLE agent_state (
  bot_id      text PRIMARY KEY REFERENCES bots(id) ON DELETE CASCADE,
  document    jsonb NOT NULL DEFAULT '{}',
  version     integer NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Agent actions: HTTP tools a run may call.
CREATE TABLE bot_actions (
  id                 text PRIMARY KEY,
  bot_id             text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  name               text NOT NULL,
  description        text NOT NULL,
  method             text NOT NULL DEFAULT 'POST' CHECK (method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
  url                text NOT NULL,
  parameters         jsonb NOT NULL DEFAULT '{"type":"object","properties":{}}',
  admin_only         boolean NOT NULL DEFAULT false,
  requires_approval  boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (bot_id, name)
);

-- Action calls waiting for (or decided by) the owner.
CREATE TABLE action_approvals (
  id           text PRIMARY KEY,
  run_id       text NOT NULL,
  bot_id       text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  action_id    text NOT NULL,
  arguments    jsonb NOT NULL,
  workflow_id  text NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  decided_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  decided_at   timestamptz
);
CREATE INDEX action_approvals_bot_idx ON action_approvals (bot_id, status, created_at DESC);

ALTER TABLE runs ADD COLUMN skipped_reason text;

-- Down Migration
ALTER TABLE runs DROP COLUMN skipped_reason;
DROP TABLE action_approvals;
DROP TABLE bot_actions;
DROP TABLE agent_state;
DROP TABLE notifications;
DROP TABLE triggers;
DROP TABLE credit_ledger;
ALTER TABLE workspaces DROP COLUMN credit_balance;
DROP TABLE user_sessions;
