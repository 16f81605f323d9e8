-- Up Migration

-- The dashboard's people, team and billing (docs/decisions/084-accounts.md).

-- Roles: the owner (everything), admins (everything but the owner's own powers: billing changes, roles), operators
-- (the inbox). Earlier "members" could do no more than read: they become operators.
ALTER TABLE users DROP CONSTRAINT users_role_check;
UPDATE users SET role = 'operator' WHERE role = 'member';
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'operator'));
ALTER TABLE users ALTER COLUMN role SET DEFAULT 'operator';
ALTER TABLE users ADD COLUMN name text;

-- An invitation to a workspace, by e-mail link. The token is a credential: kept as a hash, shown once (the link).
CREATE TABLE invitations (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  email         text NOT NULL,
  role          text NOT NULL CHECK (role IN ('admin', 'operator')),
  token_hash    bytea NOT NULL UNIQUE,
  invited_by    text REFERENCES users(id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  accepted_at   timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX invitations_workspace_idx ON invitations (workspace_id, created_at DESC);

-- A password reset link; the token kept as a hash, usable once, for an hour.
CREATE TABLE password_resets (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);

-- Billing: the plan (lib/billing/plans.ts) names the included credits; `monthly_conversation_quota` stays the
-- workspace's own monthly quota (set from the plan when the plan changes). Included credits are granted once per
-- calendar month; `included_credits_through` is the first day of the last month granted.
ALTER TABLE workspaces ADD COLUMN plan text NOT NULL DEFAULT 'free';
ALTER TABLE workspaces ADD COLUMN included_credits_through date NOT NULL DEFAULT date_trunc('month', now());

-- Top-ups recorded by the platform's operators (`agentctl billing topup`): extra conversations for the month they
-- were recorded in, or credits (which also go to the ledger).
CREATE TABLE billing_topups (
  id            bigserial PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('conversations', 'credits')),
  amount        integer NOT NULL CHECK (amount > 0),
  period_start  date NOT NULL,
  note          text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX billing_topups_workspace_idx ON billing_topups (workspace_id, period_start);

-- The inbox across a workspace's bots, latest activity first.
CREATE INDEX conversations_workspace_activity_idx ON conversations (workspace_id, last_message_at DESC, session_id);

-- Down Migration

DROP INDEX conversations_workspace_activity_idx;
DROP TABLE billing_topups;
ALTER TABLE workspaces DROP COLUMN included_credits_through;
ALTER TABLE workspaces DROP COLUMN plan;
DROP TABLE password_resets;
DROP TABLE invitations;
ALTER TABLE users DROP COLUMN name;
ALTER TABLE users DROP CONSTRAINT users_role_check;
UPDATE users SET role = 'member' WHERE role <> 'owner';
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'member'));
ALTER TABLE users ALTER COLUMN role SET DEFAULT 'owner';
