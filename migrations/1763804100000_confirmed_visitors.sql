-- Up Migration
-- The user a valid visitor confirmation (`user_auth`, signed with the bot's identity secret) named in this
-- conversation; `visitor_user` is whatever the latest turn said, confirmed or typed (`user_token`). The visitor is
-- confirmed while the two are the same. The inbox's visitor panel links other conversations as the same person only
-- then (docs/decisions/133-confirmed-identities-only.md): anyone can type `u-42`. Conversations from before are not
-- confirmed (nothing recorded whether they were). A text, not a flag, so that a turn written by a worker of the
-- previous release (which sets `visitor_user` only) can never leave another user marked confirmed.
ALTER TABLE conversations ADD COLUMN visitor_confirmed_user text;

-- Down Migration
ALTER TABLE conversations DROP COLUMN visitor_confirmed_user;
