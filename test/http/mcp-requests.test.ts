import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { BootstrapResult } from '../../lib/accounts/service';
import { insertApiKey } from '../../lib/bots/service';
import { hashKey } from '../../lib/keys';
import { LIMITS } from '../../lib/limits';
import { DELTA_CHANNEL } from '../../lib/streams/channel';
import { http, inOneRateWindow, mcpPost, newBot, testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * What one builder key can make the MCP endpoint do (issue 40, item 3; docs/decisions/135-mcp-request-budget.md): every
 * POST counts in the key's budget, JSON-RPC batches exist only in protocol revision 2025-03-26, and a request cancels
 * a bounded number of calls — each cancellation is a Postgres notification to every API replica, counted here by
 * LISTENing on the channel as a replica does.
 */

const CAP = LIMITS.builder.mcpCancellationsPerRequest;
/** A notification accepted: 202 from the SDK, which Koa writes as 204 when the body is empty. */
const ACCEPTED = [202, 204];

/** Every notification on the replicas' channel, by the key it wakes. */
let listener: pg.Client;
const heard: string[] = [];
beforeAll(async () => {
  listener = new pg.Client({ connectionString: stackInfo().databaseUrl });
  await listener.connect();
  listener.on('notification', (n) => {
    const t = (JSON.parse(n.payload ?? '{}') as { t?: unknown }).t;
    if (typeof t === 'string') heard.push(t);
  });
  await listener.query(`LISTEN ${DELTA_CHANNEL}`);
});
afterAll(() => listener.end());

/** The builder key's id: cancellations are told to the replicas by (key, JSON-RPC id). */
async function keyIdOf(key: string): Promise<string> {
  const res = await testDb().query<{ id: string }>(`SELECT id FROM api_keys WHERE key_hash = $1`, [hashKey(key)]);
  return res.rows[0].id;
}

/** How many of the notifications heard so far cancel one of `requestIds` of the key. */
function cancellationsHeard(keyId: string, requestIds: string[]): number {
  const keys = new Set(
    requestIds.map(
      (id) =>
        `builder-call:${createHash('sha256')
          .update(`${keyId}\n${JSON.stringify(id)}`)
          .digest('base64url')}`,
    ),
  );
  return heard.filter((t) => keys.has(t)).length;
}

const cancellation = (requestId: string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'timed out' },
});

/** A POST of any body, as a client of the earlier era sends it (no `MCP-Protocol-Version`: revision 2025-03-26). */
function postRaw(key: string, body: string, headers: Record<string, string> = {}) {
  return http('/v1/api/mcp', {
    rawBody: body,
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
  });
}

let bot: BootstrapResult;
let keyId: string;
beforeAll(async () => {
  bot = await newBot();
  keyId = await keyIdOf(bot.keys.builder_key);
});

describe('cancellations sent to the MCP endpoint', () => {
  it('a 1 MiB batch of cancellations is refused whole, telling no replica anything', async () => {
    const ids: string[] = [];
    const entries: string[] = [];
    let bytes = 2;
    for (let i = 0; ; i++) {
      const entry = JSON.stringify(cancellation(`flood-${i}`));
      if (bytes + entry.length + 1 > LIMITS.bodyBytes) break;
      entries.push(entry);
      ids.push(`flood-${i}`);
      bytes += entry.length + 1;
    }
    expect(ids.length).toBeGreaterThan(9_000);
    const res = await postRaw(bot.keys.builder_key, `[${entries.join(',')}]`);
    // Anything it had notified would have reached the listener by now (sent before the answer).
    await new Promise((r) => setTimeout(r, 500));
    expect(cancellationsHeard(keyId, ids)).toBeLessThanOrEqual(CAP);
    expect(cancellationsHeard(keyId, ids)).toBe(0);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(res.body.error.message).toContain(`at most ${LIMITS.builder.mcpBatchMessages} messages`);
  });

  it(`a batch of revision 2025-03-26 cancels at most ${CAP} calls; later revisions have no batches`, async () => {
    const batchOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
    const body = (ids: string[]) => JSON.stringify(ids.map(cancellation));

    const served = batchOf('served', CAP);
    expect(ACCEPTED).toContain((await postRaw(bot.keys.builder_key, body(served))).status);
    await waitUntil('the cancellations to be told', async () => cancellationsHeard(keyId, served) === CAP);

    const tooMany = batchOf('too-many', CAP + 1);
    const refused = await postRaw(bot.keys.builder_key, body(tooMany));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: -32600 });
    expect(refused.body.error.message).toContain(`cancels at most ${CAP} calls`);

    // Revision 2025-06-18 removed batches: one message per POST.
    const later = batchOf('later', 2);
    const noBatch = await postRaw(bot.keys.builder_key, body(later), { 'MCP-Protocol-Version': '2025-06-18' });
    expect(noBatch.status).toBe(400);
    expect(noBatch.body).toMatchObject({ id: null, error: { code: -32600 } });
    expect(noBatch.body.error.message).toMatch(/batches exist in protocol revision 2025-03-26 only, not in 2025-06-18/);

    await new Promise((r) => setTimeout(r, 500));
    expect(cancellationsHeard(keyId, tooMany)).toBe(0);
    expect(cancellationsHeard(keyId, later)).toBe(0);
    expect(cancellationsHeard(keyId, served)).toBe(CAP);
  });
});

describe("the builder key's request budget", () => {
  it(`counts every POST: past ${LIMITS.builder.mcpRequestsPerMinute} a minute, notifications are 429 and requests get their error`, async () => {
    const own = await newBot();
    const key = own.keys.builder_key;
    const limit = LIMITS.builder.mcpRequestsPerMinute;
    await inOneRateWindow(30_000);
    // Notifications only: no read, no builder message, nothing else counts them.
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    for (let sent = 0; sent < limit; sent += 20) {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () => mcpPost(initialized, { key }).then((r) => r.status)),
      );
      expect(statuses.filter((s) => !ACCEPTED.includes(s))).toEqual([]);
    }

    const notification = await mcpPost(initialized, { key });
    expect(notification.status).toBe(429);
    expect(notification.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    const wait = Number(notification.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(notification.body.error.data.retry_after).toBe(wait);

    const list = await mcpPost({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }, { key });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ id: 5, error: { code: -32000 } });
    expect(list.body.error.message).toMatch(/too many requests with this builder key/i);
    expect(Number(list.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // A tool call gets a tool result with isError, as the builder's limits are said (contract, Errors rule 3).
    const tool = await mcpPost(
      { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'agents', arguments: {} } },
      { key },
    );
    expect(tool.status).toBe(200);
    expect(tool.body.result.isError).toBe(true);
    expect(tool.body.result.content[0].text).toMatch(/nothing was changed/i);

    // The budget is the key's: another key of the same workspace is served.
    const { key: second } = await insertApiKey(testDb(), {
      workspaceId: own.workspace_id,
      botId: null,
      kind: 'builder',
      issuedVia: 'test',
    });
    const other = await mcpPost({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }, { key: second });
    expect(other.status).toBe(200);
    expect(other.body.result.tools.map((t: { name: string }) => t.name)).toContain('constructor');
  });
});
