-- Up Migration

-- Every wake-up of an agent is a run (contract, What the service does), modelled by an agentRun workflow
-- `run/{id}`; this row is the product's record of it (the run log), written by the workflow's activities.
CREATE TABLE runs (
  id                 text PRIMARY KEY,
  bot_id             text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  workspace_id       text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  trigger_kind       text NOT NULL CHECK (trigger_kind IN ('message', 'webhook', 'schedule', 'poll', 'manual')),
  trigger_id         text,
  session_id         text,
  -- the Temporal workflow that executed the run: run/{id} for triggers, the conversation for chat turns
  workflow_id        text NOT NULL,
  status             text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  input              text NOT NULL,
  answer             text,
  error_code         text,
  error              text,
  model              text,
  prompt_tokens      integer NOT NULL DEFAULT 0,
  completion_tokens  integer NOT NULL DEFAULT 0,
  credits            integer NOT NULL DEFAULT 0,
  started_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz
);
CREATE INDEX runs_bot_started_idx ON runs (bot_id, started_at DESC, id DESC);
CREATE INDEX runs_session_idx ON runs (session_id) WHERE session_id IS NOT NULL;

-- Quota: conversations started per workspace per month.
CREATE INDEX conversations_workspace_created_idx ON conversations (workspace_id, created_at);
-- Operator thread list: requests handed over, newest activity first.
CREATE INDEX conversations_escalated_idx ON conversations (bot_id, escalated_at DESC, session_id) WHERE escalated_at IS NOT NULL;

-- Outgoing webhooks (contract, Events): one row per event, one per attempt. The webhookDelivery workflow
-- `delivery/{id}` drives the attempts; these rows are what the dashboard shows.
CREATE TABLE webhook_deliveries (
  id            text PRIMARY KEY,
  bot_id        text NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  session_id    text,
  event         text NOT NULL,
  url           text NOT NULL,
  body          text NOT NULL,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX webhook_deliveries_bot_idx ON webhook_deliveries (bot_id, created_at DESC);

CREATE TABLE webhook_attempts (
  delivery_id   text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  status_code   integer,
  error         text,
  duration_ms   integer NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP INDEX conversations_escalated_idx;
DROP INDEX conversations_workspace_created_idx;
DROP TABLE runs;
