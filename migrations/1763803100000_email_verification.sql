-- Up Migration
-- Sign-up is verified before credits (docs/decisions/111-signup-verification.md): a workspace made by
-- sign-up gets its included credits once its owner has confirmed the e-mail address, by the e-mailed link or by
-- another proof of the mailbox (an accepted invitation, a confirmed password reset).
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
-- Everyone here before counts as verified: no workspace loses its credits or its next month's grant.
UPDATE users SET email_verified_at = created_at;
-- The monthly grant skips workspaces whose owner has not confirmed; abandoned sign-ups stay few rows to look at.
CREATE INDEX users_unverified_idx ON users (workspace_id) WHERE email_verified_at IS NULL;

-- A confirmation link; the token is a credential: kept as a hash, usable while unused and unexpired. A newer link
-- (a resend) sets `used_at` on the older ones, as password resets do. `resend` tells the links asked for again from
-- the sign-up's own (the resends are counted per hour).
CREATE TABLE email_verifications (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  resend      boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX email_verifications_user_idx ON email_verifications (user_id, created_at DESC);

-- Down Migration
DROP TABLE email_verifications;
DROP INDEX users_unverified_idx;
ALTER TABLE users DROP COLUMN email_verified_at;
