import { afterAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

describe('maintenanceWorkflow on the real dev server and worker', () => {
  let connection: Connection | undefined;
  afterAll(async () => connection?.close());

  it('expires idempotency keys past their 24 hours and turn streams an hour past their claim, keeps the live ones, and tallies the month’s conversations', async () => {
    const db = testDb();
    const bot = await newBot();
    // A conversation started two minutes ago, past the tally's minute of lag (within this month: in a month's first
    // minute nothing is old enough to tally, and this test cannot pass).
    await db.query(
      `INSERT INTO conversations (session_id, bot_id, workspace_id, created_at)
       VALUES ($1, $2, $3, GREATEST(now() - interval '2 minutes', date_trunc('month', now())))`,
      [randomUUID(), bot.bot_id, bot.workspace_id],
    );
    const keyId = `key_test_${randomUUID()}`;
    await db.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_hash, state, expires_at)
       VALUES ($1, 'old', '\\x00', 'done', now() - interval '1 minute'),
              ($1, 'live', '\\x00', 'done', now() + interval '23 hours')`,
      [keyId],
    );

    // Streams go by when they were claimed: sends do not touch a timestamp (they are HOT updates), and an old one
    // may have been sent to a minute ago by an attempt of the previous release (which still sets updated_at).
    const [oldTurn, liveTurn] = [randomUUID(), randomUUID()];
    await db.query(
      `INSERT INTO turn_streams (turn_id, owner, claimed_at, updated_at)
       VALUES ($1, gen_random_uuid(), now() - interval '2 hours', now() - interval '1 minute'),
              ($2, gen_random_uuid(), now() - interval '5 minutes', now() - interval '5 minutes')`,
      [oldTurn, liveTurn],
    );

    const info = stackInfo();
    connection = await Connection.connect({ address: info.temporalAddress });
    const client = new Client({ connection, namespace: info.namespace });
    const result = await client.workflow.execute(maintenanceWorkflow, {
      taskQueue: info.taskQueue,
      workflowId: `test-maintenance-${randomUUID()}`,
      workflowExecutionTimeout: '30 seconds',
    });

    expect(result.idempotencyKeys).toBeGreaterThanOrEqual(1);
    const left = await db.query(`SELECT idempotency_key FROM idempotency_keys WHERE api_key_id = $1`, [keyId]);
    expect(left.rows.map((r) => r.idempotency_key)).toEqual(['live']);
    const streams = await db.query(`SELECT turn_id FROM turn_streams WHERE turn_id = ANY($1)`, [[oldTurn, liveTurn]]);
    expect(streams.rows).toEqual([{ turn_id: liveTurn }]);
    expect(result.periodic?.conversationTallies).toBeGreaterThanOrEqual(1);
    const tally = await db.query(`SELECT counted FROM conversation_tallies WHERE workspace_id = $1`, [
      bot.workspace_id,
    ]);
    expect(tally.rows).toEqual([{ counted: 1 }]);
  });
});
