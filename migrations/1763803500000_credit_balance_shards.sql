-- Up Migration
-- Every finished run charged its workspace by updating `workspaces.credit_balance`, so every turn of a workspace
-- queued for that one row, and held it through its commit's flush: at 300 visitors of one workspace the run's last
-- statement took 5.3 ms where it takes 0.5 without that update (docs/decisions/130-credit-balance-shards.md).
-- Run charges now go to one of sixteen rows of the workspace, chosen by the run id; grants and top-ups
-- still go to `workspaces.credit_balance`. A workspace's balance is that column plus its shards
-- (lib/credits/service.ts, creditBalanceSql). Nothing moves: during a rolling deploy, workers of the previous release
-- charge the column, and their charges are counted the same.
CREATE TABLE credit_balance_shards (
  workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  shard         smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
  balance       integer NOT NULL,
  PRIMARY KEY (workspace_id, shard)
);

-- Down Migration
UPDATE workspaces w SET credit_balance = w.credit_balance + s.balance
  FROM (SELECT workspace_id, sum(balance)::int AS balance FROM credit_balance_shards GROUP BY workspace_id) s
 WHERE s.workspace_id = w.id;
DROP TABLE credit_balance_shards;
