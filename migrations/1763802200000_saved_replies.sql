-- Up Migration
-- The team's saved replies (docs/decisions/095-visitor-panel.md): texts an operator inserts into a reply instead of
-- typing them again, shared by the workspace.
CREATE TABLE saved_replies (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  title         text NOT NULL,
  text          text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX saved_replies_title_key ON saved_replies (workspace_id, lower(title));

-- Down Migration
DROP TABLE saved_replies;
