-- Up Migration
-- Sign-in attempts per account, across client addresses (docs/decisions/054-sign-in-limits.md): every attempt counts
-- before its password is checked, a success clears the row; from the 5th failure on the account is slowed down
-- (`locked_until`, doubling to 15 minutes) and attempts meanwhile are refused without checking anything.
CREATE TABLE login_throttle (
  account text PRIMARY KEY,            -- sha-256 of the lower-cased e-mail (accounts or not: no probing)
  failures integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  refused boolean NOT NULL DEFAULT false, -- whether the latest attempt was refused (read by RETURNING)
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE login_throttle;
