import { afterAll, describe, expect, it } from '@jest/globals';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

describe('POST /v1/api/visitors/erase', () => {
  let connection: Connection | undefined;
  afterAll(async () => connection?.close());

  it('deletes everything stored about one visitor, workflow histories included, and nothing of others', async () => {
    const bot = await newBot();
    const mine = [randomUUID(), randomUUID()];
    const other = randomUUID();
    for (const sid of mine)
      await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { session_id: sid, message: 'my secret', user_token: 'visitor-7' },
      });
    await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: other, message: 'someone else', user_token: 'visitor-8' },
    });

    const res = await http('/v1/api/visitors/erase', { key: bot.keys.secret_key, body: { user_token: 'visitor-7' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'erased', conversations: 2 });

    const db = testDb();
    for (const sid of mine) {
      expect((await db.query(`SELECT 1 FROM conversations WHERE session_id = $1`, [sid])).rowCount).toBe(0);
      expect((await db.query(`SELECT 1 FROM messages WHERE session_id = $1`, [sid])).rowCount).toBe(0);
      expect((await db.query(`SELECT 1 FROM runs WHERE session_id = $1`, [sid])).rowCount).toBe(0);
      const poll = await http(`/v1/api/messages?session_id=${sid}`, { key: bot.keys.secret_key });
      expect(poll.body.messages).toEqual([]);
    }
    expect((await db.query(`SELECT 1 FROM messages WHERE session_id = $1`, [other])).rowCount).toBe(2);

    connection = await Connection.connect({ address: stackInfo().temporalAddress });
    const client = new Client({ connection });
    const deadline = Date.now() + 10_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      try {
        await client.workflow.getHandle(conversationWorkflowId(bot.bot_id, mine[0])).describe();
        await new Promise((r) => setTimeout(r, 250)); // deletion is asynchronous on the server
      } catch (err) {
        gone = err instanceof WorkflowNotFoundError;
        if (!gone) throw err;
      }
    }
    expect(gone).toBe(true);
    await client.workflow.getHandle(conversationWorkflowId(bot.bot_id, other)).describe(); // still there
  });

  it('needs user_token or session_id, and never touches another bot', async () => {
    const bot = await newBot();
    const other = await newBot();
    const sid = randomUUID();
    await http('/v1/api/chat', { key: other.keys.secret_key, body: { session_id: sid, message: 'hi' } });
    expect((await http('/v1/api/visitors/erase', { key: bot.keys.secret_key, body: {} })).status).toBe(400);
    const res = await http('/v1/api/visitors/erase', { key: bot.keys.secret_key, body: { session_id: sid } });
    expect(res.body).toEqual({ status: 'erased', conversations: 0 });
    expect((await testDb().query(`SELECT 1 FROM messages WHERE session_id = $1`, [sid])).rowCount).toBe(2);
  });
});
