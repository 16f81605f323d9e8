-- Up Migration
-- Who handles a handed-over conversation, and who of the team is writing to it (docs/decisions/096-assignment.md):
-- an operator assigns it to themselves or to a teammate (a reply from the dashboard takes an
-- unassigned one); the person typing a reply is kept with the typing signal, so another operator sees "Ana is
-- replying" before writing a second answer.
ALTER TABLE conversations
  ADD COLUMN assignee_user_id text REFERENCES users(id) ON DELETE SET NULL,
  ADD COLUMN operator_typing_by text REFERENCES users(id) ON DELETE SET NULL;
CREATE INDEX conversations_assignee_idx ON conversations (assignee_user_id) WHERE assignee_user_id IS NOT NULL;

-- Down Migration
DROP INDEX conversations_assignee_idx;
ALTER TABLE conversations DROP COLUMN assignee_user_id, DROP COLUMN operator_typing_by;
