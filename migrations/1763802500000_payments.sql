-- Up Migration
-- Paying for a plan (docs/decisions/092-paying-for-a-plan.md): the provider's events, each handled once (a provider
-- resends an event until it is acknowledged), and the subscription that keeps a workspace on its plan.
CREATE TABLE payment_events (
  provider      text NOT NULL,
  event_id      text NOT NULL,
  kind          text NOT NULL,
  workspace_id  text REFERENCES workspaces(id) ON DELETE SET NULL,
  received_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);
ALTER TABLE workspaces ADD COLUMN payment_subscription_id text;
CREATE UNIQUE INDEX workspaces_payment_subscription_key ON workspaces (payment_subscription_id)
  WHERE payment_subscription_id IS NOT NULL;

-- Down Migration
DROP INDEX workspaces_payment_subscription_key;
ALTER TABLE workspaces DROP COLUMN payment_subscription_id;
DROP TABLE payment_events;
