-- Up Migration
-- The conversations each workspace started in a month, counted by the maintenance schedule up to `counted_through`
-- (lib/billing/service.ts, tallyConversations). A new conversation's quota check adds those created since: minutes of
-- rows, where counting the whole month's grew with every conversation (docs/decisions/093-conversation-tallies.md).
-- No row: nothing counted yet this month, the check counts the month from its start.
CREATE TABLE conversation_tallies (
  workspace_id     text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  period           date NOT NULL,
  counted          integer NOT NULL CHECK (counted >= 0),
  counted_through  timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, period)
);

-- Down Migration
DROP TABLE conversation_tallies;
