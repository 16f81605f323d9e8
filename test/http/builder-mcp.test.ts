import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { BootstrapResult } from '../../lib/accounts/service';
import { stackInfo } from '../support/stack-info';
import { pauseTriggerForFailures } from '../../lib/triggers/store';
import { insertApiKey, rotateKey } from '../../lib/bots/service';
import { createSecretBox } from '../../lib/secret-box';
import {
  fakeRequests,
  http,
  mcpPost,
  newBot,
  ownerSession,
  rawRequest,
  testDb,
  waitUntil,
  type FakeScriptStep,
  scriptFakeModel,
  toolCall as call,
} from '../support/helpers';

/**
 * The builder over MCP (contract, Builder over MCP), driven with the official client in both protocol eras against the
 * running API. The fake OpenAI is scripted to make the builder's tool calls: each script's steps are the model's
 * answers to the builder's successive LLM calls.
 */

type Era = 'legacy' | 'auto';
const MCP_URL = () => `${stackInfo().apiUrl}/v1/api/mcp`;

async function connect(key: string, mode: Era): Promise<Client> {
  const client = new Client({ name: 'builder-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(MCP_URL()), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function script(steps: FakeScriptStep[]): Promise<string> {
  return (await scriptFakeModel(steps, 'builder')).marker;
}

function textOf(result: { content?: unknown }): string {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return content.map((c) => c.text ?? '').join('');
}

async function constructor(client: Client, message: string, thread?: string, timeout?: number) {
  return client.callTool(
    { name: 'constructor', arguments: { message, ...(thread ? { thread } : {}) } },
    timeout ? { timeout } : undefined,
  );
}

async function instructionsOf(botId: string): Promise<string> {
  const res = await testDb().query<{ instructions: string }>(`SELECT instructions FROM bots WHERE id = $1`, [botId]);
  return res.rows[0].instructions;
}

const eras: Era[] = ['legacy', 'auto'];

describe.each(eras)('MCP builder, %s era', (era) => {
  let bot: BootstrapResult;
  let client: Client;

  beforeEach(async () => {
    bot = await newBot({ botName: 'Support desk' });
    client = await connect(bot.keys.builder_key, era);
  });
  afterEach(async () => {
    await client.close();
  });

  it('negotiates its era and lists the three tools with declared input schemas', async () => {
    expect(client.getNegotiatedProtocolVersion()).toEqual(
      era === 'auto' ? '2026-07-28' : expect.stringMatching(/^2025-/),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['agents', 'constructor', 'incidents']);
    const ctor = tools.find((t) => t.name === 'constructor')!;
    expect(ctor.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
    expect(Object.keys(ctor.inputSchema.properties ?? {}).sort()).toEqual(['message', 'thread']);
    expect(tools.find((t) => t.name === 'incidents')!.inputSchema).toMatchObject({ required: ['agent_id'] });
  });

  it('agents lists the workspace with counts, marking the bot the key was issued for', async () => {
    const result = await client.callTool({ name: 'agents', arguments: {} });
    expect(result.isError).toBeFalsy();
    const payload = result.structuredContent as { agents: Record<string, unknown>[] };
    expect(payload.agents).toEqual([
      expect.objectContaining({
        id: bot.bot_id,
        name: 'Support desk',
        knowledge_sources: 0,
        issued_for_this_key: true,
      }),
    ]);
    expect(JSON.parse(textOf(result))).toEqual(payload);
  });

  it('a change applied at once: the knowledge text is added, and an identical text is not added twice', async () => {
    const text = `FACT: parcels ship within ${randomUUID()} days`;
    const marker = await script([
      { toolCalls: [call('add_knowledge', { agent_id: bot.bot_id, title: 'Shipping', text })] },
      { text: 'Added the shipping text.' },
      { toolCalls: [call('add_knowledge', { agent_id: bot.bot_id, title: 'Shipping', text })] },
      { text: 'Such a source exists already.' },
    ]);
    const thread = `t-${randomUUID()}`;
    const first = await constructor(client, `${marker} add our shipping promise`, thread);
    expect(first.isError).toBeFalsy();
    expect(textOf(first)).toContain('Added the shipping text.');
    const again = await constructor(client, 'add it again', thread);
    expect(textOf(again)).toContain('Such a source exists already.');
    const rows = await testDb().query(`SELECT source_id FROM knowledge_sources WHERE bot_id = $1`, [bot.bot_id]);
    expect(rows.rowCount).toBe(1);
  });
});

describe('MCP builder: reads, consent, refusals', () => {
  let bot: BootstrapResult;
  let client: Client;

  beforeEach(async () => {
    bot = await newBot({ botName: 'Shop assistant' });
    client = await connect(bot.keys.builder_key, 'auto');
  });
  afterEach(async () => {
    await client.close();
  });

  it('incidents names a paused trigger in plain words, with how to fix it', async () => {
    const created = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
      headers: await ownerSession(bot),
      body: { kind: 'webhook', name: 'Orders hook', task: 'Summarize the order' },
    });
    expect(created.status).toBe(201);
    expect(await pauseTriggerForFailures(testDb(), created.body.id)).not.toBeNull();
    const result = await client.callTool({ name: 'incidents', arguments: { agent_id: bot.bot_id } });
    expect(result.isError).toBeFalsy();
    const { incidents } = result.structuredContent as { incidents: { kind: string; problem: string; fix: string }[] };
    const paused = incidents.find((i) => i.kind === 'trigger_paused');
    expect(paused).toBeDefined();
    expect(paused!.problem).toContain('Orders hook');
    expect(paused!.fix.length).toBeGreaterThan(10);
    // Another workspace's agent is not found (and says so as a tool error).
    const other = await newBot();
    const foreign = await client.callTool({ name: 'incidents', arguments: { agent_id: other.bot_id } });
    expect(foreign.isError).toBe(true);
  });

  it('a change visible to customers is asked first, then applied exactly after "yes" in the same thread', async () => {
    const before = await instructionsOf(bot.bot_id);
    const marker = await script([
      {
        toolCalls: [call('update_agent', { agent_id: bot.bot_id, changes: { instructions: 'Answer like a pirate.' } })],
      },
      { text: 'I will make it answer like a pirate once you confirm.' },
    ]);
    const thread = `consent-${randomUUID()}`;
    const asked = await constructor(client, `${marker} make it talk like a pirate`, thread);
    const lines = textOf(asked).trim().split('\n');
    // The line shows what would be written, quoted.
    expect(lines.at(-1)).toBe(
      '[Awaiting confirmation: change agent "Shop assistant": instructions to "Answer like a pirate.". Reply "yes" to apply it.]',
    );
    expect((asked.structuredContent as Record<string, unknown>).awaiting_confirmation).toContain('instructions');
    expect(await instructionsOf(bot.bot_id)).toBe(before);

    const done = await constructor(client, 'yes', thread);
    expect(textOf(done)).toContain('Done: change agent "Shop assistant": instructions to "Answer like a pirate."');
    expect(await instructionsOf(bot.bot_id)).toBe('Answer like a pirate.');
  });

  it('"yes" in another thread is a word without a question: nothing is applied there, the consent stays where it was', async () => {
    const marker = await script([
      { toolCalls: [call('update_agent', { agent_id: bot.bot_id, changes: { name: 'Renamed' } })] },
      { text: 'Renaming awaits your yes.' },
    ]);
    const thread = `a-${randomUUID()}`;
    const asked = await constructor(client, `${marker} rename the agent`, thread);
    expect(textOf(asked)).toContain('[Awaiting confirmation: change agent "Shop assistant": name to "Renamed".');
    const tag = `elsewhere-${randomUUID()}`;
    const elsewhere = await constructor(client, `[[fake:tag:${tag}]] yes`, `b-${randomUUID()}`);
    expect(textOf(elsewhere)).not.toContain('Done:');
    const res = await testDb().query(`SELECT name FROM bots WHERE id = $1`, [bot.bot_id]);
    expect(res.rows[0].name).toBe('Shop assistant');
    // The other thread had no question: the "yes" went to the model as an ordinary message.
    expect(await fakeRequests(tag)).toHaveLength(1);
    // Without a thread is yet another conversation.
    await constructor(client, 'yes');
    expect((await testDb().query(`SELECT name FROM bots WHERE id = $1`, [bot.bot_id])).rows[0].name).toBe(
      'Shop assistant',
    );
    // Where it was asked, "yes" applies it.
    await constructor(client, 'yes', thread);
    expect((await testDb().query(`SELECT name FROM bots WHERE id = $1`, [bot.bot_id])).rows[0].name).toBe('Renamed');
  });

  it('the same changing call twice in a row within one turn is performed once', async () => {
    const marker = await script([
      {
        toolCalls: [
          call('create_trigger', { agent_id: bot.bot_id, trigger: { kind: 'manual', task: 'Daily digest' } }),
          call('create_trigger', { agent_id: bot.bot_id, trigger: { task: 'Daily digest', kind: 'manual' } }),
        ],
      },
      { text: 'Created the trigger.' },
    ]);
    await constructor(client, `${marker} add a manual digest trigger`);
    const rows = await testDb().query(`SELECT id FROM triggers WHERE bot_id = $1`, [bot.bot_id]);
    expect(rows.rowCount).toBe(1);
  });

  it("a new webhook trigger is made at once and its secret shown once, never in the thread's workflow history", async () => {
    const marker = await script([
      {
        toolCalls: [call('create_trigger', { agent_id: bot.bot_id, trigger: { kind: 'webhook', task: 'Handle it' } })],
      },
      { text: 'Your webhook trigger is ready.' },
    ]);
    const thread = `hook-${randomUUID()}`;
    const result = await constructor(client, `${marker} give me a webhook trigger`, thread);
    const shown = textOf(result);
    expect(shown).not.toContain('[Awaiting confirmation');
    const secret = /\(shown once\): (\S+)/.exec(shown)?.[1];
    expect(secret).toBeDefined();
    const rows = await testDb().query(`SELECT id FROM triggers WHERE bot_id = $1 AND kind = 'webhook'`, [bot.bot_id]);
    expect(rows.rowCount).toBe(1);
    // The secret works: a signed call to the hook is accepted.
    const { createHmac } = await import('node:crypto');
    const body = JSON.stringify({ order: 1 });
    const signature = createHmac('sha256', secret!).update(body).digest('hex');
    const hook = await http(`/v1/hooks/${rows.rows[0].id}`, {
      rawBody: body,
      headers: { 'Content-Type': 'application/json', 'X-Hook-Signature': `sha256=${signature}` },
    });
    expect([200, 202]).toContain(hook.status);
    // Temporal keeps the thread's history: the secret is in it only sealed.
    const { Connection, Client: TemporalClient } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: stackInfo().temporalAddress });
    try {
      const temporal = new TemporalClient({ connection, namespace: stackInfo().namespace });
      const builderKeyId = (
        await testDb().query<{ id: string }>(`SELECT id FROM api_keys WHERE bot_id = $1 AND kind = 'builder'`, [
          bot.bot_id,
        ])
      ).rows[0].id;
      const history = await temporal.workflow
        .getHandle(`builder/${bot.workspace_id}/key:${builderKeyId}/mcp:${thread}`)
        .fetchHistory();
      expect(JSON.stringify(history)).not.toContain(secret!);
      expect(Buffer.from(JSON.stringify(history)).toString('base64')).not.toContain(
        Buffer.from(secret!).toString('base64'),
      );
    } finally {
      await connection.close();
    }
  });

  const RULE_6 = [
    'Invite anna@example.com to the dashboard',
    'Please hand the agent over to Bob',
    'Cancel the handover of this agent',
    'Accept the agent Bob handed over to me',
    'Decline the handover from Bob',
    'Restore the deleted agent called Helpdesk',
  ];
  const RULE_7 = [
    'Buy 5000 credits',
    'Upgrade my plan to Pro',
    'Issue me another builder key',
    'Allow another program to connect to this workspace',
    'Change my e-mail to new@example.com',
    'Delete my account',
    'Remove Bob from the team',
    'Delete the agent Shop assistant',
    'Reissue the secret key of this agent',
    'Reply to the customer in session 42 that the parcel left',
    'Approve the refund action waiting for permission',
  ];

  it.each(RULE_6)('rule 6, refused at once without asking and without the model: %s', async (message) => {
    const tag = `r6-${randomUUID()}`;
    const result = await constructor(client, `${message} [[fake:tag:${tag}]]`);
    const text = textOf(result);
    expect(text).toMatch(/^The builder does not .+, so nothing was changed\./);
    expect(text).not.toContain('[Awaiting confirmation');
    expect(await fakeRequests(tag)).toHaveLength(0);
  });

  it.each(RULE_7)('rule 7, what a builder key can never do: %s', async (message) => {
    const tag = `r7-${randomUUID()}`;
    const result = await constructor(client, `${message} [[fake:tag:${tag}]]`);
    expect(textOf(result)).toMatch(/^A program connected with a builder key cannot .+, so nothing was changed\./);
    expect(await fakeRequests(tag)).toHaveLength(0);
  });

  it('rule 7 in the tool layer: the model is never offered those operations, and a call to one does nothing', async () => {
    const keysBefore = await testDb().query(`SELECT id FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL`, [
      bot.workspace_id,
    ]);
    const marker = await script([
      {
        toolCalls: [
          call('issue_builder_key', {}),
          call('delete_agent', { agent_id: bot.bot_id }),
          call('approve_action', { agent_id: bot.bot_id }),
        ],
      },
      { text: 'I could not do those.' },
    ]);
    const result = await constructor(client, `${marker} something sneaky`);
    expect(textOf(result)).toContain('I could not do those.');
    const tag = marker.slice('[[fake:script:'.length, -2);
    const [request, followUp] = await fakeRequests(tag);
    const offered = (request.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    for (const forbidden of ['issue_builder_key', 'delete_agent', 'approve_action', 'reply_to_customer', 'buy_credits'])
      expect(offered).not.toContain(forbidden);
    expect(offered).toEqual(
      expect.arrayContaining(['update_agent', 'add_knowledge', 'create_trigger', 'revoke_builder_keys']),
    );
    const toolAnswers = (followUp.body.messages as { role: string; content: string }[]).filter(
      (m) => m.role === 'tool',
    );
    expect(toolAnswers.map((m) => m.content)).toEqual([
      expect.stringContaining('Not available'),
      expect.stringContaining('Not available'),
      expect.stringContaining('Not available'),
    ]);
    const keysAfter = await testDb().query(`SELECT id FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL`, [
      bot.workspace_id,
    ]);
    expect(keysAfter.rowCount).toBe(keysBefore.rowCount);
    expect((await testDb().query(`SELECT 1 FROM bots WHERE id = $1`, [bot.bot_id])).rowCount).toBe(1);
  });
});

describe('MCP builder: turns, threads and limits', () => {
  it('the 13th builder message of a minute in a workspace is a tool error with the seconds to wait, across keys', async () => {
    const bot = await newBot();
    // A second builder key of the same workspace: the budget is the workspace's, not a key's or an address's.
    const { key: second } = await insertApiKey(testDb(), {
      workspaceId: bot.workspace_id,
      botId: null,
      kind: 'builder',
      issuedVia: 'test',
    });
    const a = await connect(bot.keys.builder_key, 'auto');
    const b = await connect(second, 'legacy');
    try {
      // Stay inside one minute window: start right after a minute turns.
      const intoMinute = (Date.now() / 1000) % 60;
      if (intoMinute > 45) await new Promise((r) => setTimeout(r, (61 - intoMinute) * 1000));
      const results = [];
      for (let i = 0; i < 12; i++) results.push(await constructor(i % 2 ? b : a, `[[fake:echo]] hello ${i}`));
      expect(results.every((r) => !r.isError)).toBe(true);
      const limited = await constructor(a, 'hello 13');
      expect(limited.isError).toBe(true);
      const text = textOf(limited);
      expect(text).toMatch(/nothing was changed/i);
      const seconds = Number(/in (\d+) s/.exec(text)?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
      // The same value in Retry-After, on the HTTP response of the 14th (a raw JSON-RPC call, legacy stateless).
      const raw = await mcpPost(
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'constructor', arguments: { message: 'hello 14' } },
        },
        { key: bot.keys.builder_key },
      );
      expect(raw.status).toBe(200);
      expect(raw.body.result.isError).toBe(true);
      expect(raw.headers.get('retry-after')).toBe(/in (\d+) s/.exec(raw.body.result.content[0].text)?.[1]);
      // Reads are not in that budget.
      expect((await a.callTool({ name: 'agents', arguments: {} })).isError).toBeFalsy();
      // Another workspace is not limited.
      const other = await newBot();
      const c = await connect(other.keys.builder_key, 'auto');
      expect((await constructor(c, '[[fake:echo]] hi')).isError).toBeFalsy();
      await c.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a call behind a turn that takes too long answers busy and changes nothing; another thread does not wait', async () => {
    const bot = await newBot();
    const client = await connect(bot.keys.builder_key, 'auto');
    try {
      const slow = await script([{ text: 'Finally done.', delayMs: 3000 }]);
      const thread = `busy-${randomUUID()}`;
      const first = constructor(client, `${slow} think hard`, thread);
      await new Promise((r) => setTimeout(r, 400));
      const otherSlow = await script([{ text: 'Other thread done.', delayMs: 2500 }]);
      const parallel = constructor(client, `${otherSlow} elsewhere`, `other-${randomUUID()}`);
      const marker = await script([
        { toolCalls: [call('add_knowledge', { agent_id: bot.bot_id, text: 'FACT: must not be added' })] },
        { text: 'Added.' },
      ]);
      const second = await constructor(client, `${marker} add a fact`, thread);
      expect(textOf(second)).toMatch(/still working on the previous message.*nothing was changed/i);
      expect((second.structuredContent as { busy?: boolean }).busy).toBe(true);
      expect(textOf(await first)).toContain('Finally done.');
      // The other thread ran beside it: it waited for nobody (queued, it would have been busy after 2 s).
      const other = await parallel;
      expect(textOf(other)).toContain('Other thread done.');
      expect((other.structuredContent as { busy?: boolean }).busy).toBeUndefined();
      const rows = await testDb().query(`SELECT 1 FROM knowledge_sources WHERE bot_id = $1`, [bot.bot_id]);
      expect(rows.rowCount).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a turn whose client stopped waiting still finishes; its result leads the next response in that thread', async () => {
    const bot = await newBot();
    const client = await connect(bot.keys.builder_key, 'auto');
    try {
      const marker = await script([
        { toolCalls: [call('add_knowledge', { agent_id: bot.bot_id, text: 'FACT: late but done' })], delayMs: 1500 },
        { text: 'The late fact is in.' },
        { text: 'Here is the next answer.' },
      ]);
      const thread = `late-${randomUUID()}`;
      await expect(constructor(client, `${marker} add the late fact`, thread, 500)).rejects.toThrow(/timed out/i);
      // The turn goes on without its caller.
      await waitUntil('the late turn to change the knowledge', async () => {
        const r = await testDb().query(`SELECT 1 FROM knowledge_sources WHERE bot_id = $1`, [bot.bot_id]);
        return r.rowCount === 1;
      });
      const next = await constructor(client, 'and now?', thread);
      const text = textOf(next);
      expect(text.indexOf('The late fact is in.')).toBeGreaterThanOrEqual(0);
      expect(text.indexOf('The late fact is in.')).toBeLessThan(text.indexOf('Here is the next answer.'));
      // Delivered once: the following response does not repeat it.
      const after = await constructor(client, 'one more', thread);
      expect(textOf(after)).not.toContain('The late fact is in.');
    } finally {
      await client.close();
    }
  });
});

describe('the MCP endpoint over HTTP', () => {
  const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const headers = (key?: string) => ({
    ...(key ? { Authorization: `Bearer ${key}` } : {}),
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
  });

  it('accepts only builder keys in Authorization: Bearer, with the contract codes', async () => {
    const bot = await newBot();
    const post = (key?: string) => mcpPost(rpc, { key });
    expect((await post()).body).toMatchObject({ code: 'missing_key' });
    expect((await post()).status).toBe(401);
    expect((await post('ck_nope')).body).toMatchObject({ code: 'invalid_key' });
    for (const key of [bot.keys.secret_key, bot.keys.public_key]) {
      const res = await post(key);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'wrong_key_type' });
    }
    const ok = await post(bot.keys.builder_key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('application/json');
    expect(ok.body.result.tools).toHaveLength(3);
  });

  it('GET is 405; a request from a page of another site is 403', async () => {
    const bot = await newBot();
    const get = await http('/v1/api/mcp', { headers: { Authorization: `Bearer ${bot.keys.builder_key}` } });
    expect(get.status).toBe(405);
    const foreign = await rawRequest(MCP_URL(), {
      method: 'POST',
      headers: { ...headers(bot.keys.builder_key), Origin: 'https://evil.example' },
      body: JSON.stringify(rpc),
    });
    expect(foreign.status).toBe(403);
    const own = await rawRequest(MCP_URL(), {
      method: 'POST',
      headers: { ...headers(bot.keys.builder_key), Origin: new URL(stackInfo().apiUrl).origin },
      body: JSON.stringify(rpc),
    });
    expect(own.status).toBe(200);
  });
});

describe('POST /v1/dashboard/builder', () => {
  it('is the same builder in one HTTP call, with its own conversation and consent', async () => {
    const bot = await newBot({ botName: 'Front desk' });
    const marker = await script([
      { toolCalls: [call('update_agent', { agent_id: bot.bot_id, changes: { instructions: 'Be brief.' } })] },
      { text: 'Shall I make it brief?' },
    ]);
    const asked = await http('/v1/dashboard/builder', {
      key: bot.keys.builder_key,
      body: { message: `${marker} make it brief` },
    });
    expect(asked.status).toBe(200);
    expect(asked.body.reply).toMatch(
      /\[Awaiting confirmation: change agent "Front desk": instructions to "Be brief\."\..*\]$/,
    );
    expect(asked.body.awaiting_confirmation).toContain('instructions');
    // The MCP conversation without a thread is another conversation: its "yes" applies nothing here.
    const client = await connect(bot.keys.builder_key, 'auto');
    await constructor(client, 'yes');
    await client.close();
    expect(await instructionsOf(bot.bot_id)).not.toBe('Be brief.');
    const done = await http('/v1/dashboard/builder', { key: bot.keys.builder_key, body: { message: 'yes' } });
    expect(done.body.reply).toContain('Done:');
    expect(await instructionsOf(bot.bot_id)).toBe('Be brief.');
    // Keys: an sk_ is not accepted by the builder; a message is required.
    const wrong = await http('/v1/dashboard/builder', { key: bot.keys.secret_key, body: { message: 'hi' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('wrong_key_type');
    const empty = await http('/v1/dashboard/builder', { key: bot.keys.builder_key, body: { message: '  ' } });
    expect(empty.status).toBe(400);
  });
});

describe('builder keys (rule 5)', () => {
  it('reissuing the builder key stops every earlier builder key of the workspace; other workspaces keep theirs', async () => {
    const bot = await newBot();
    const other = await newBot();
    const { key: paired } = await insertApiKey(testDb(), {
      workspaceId: bot.workspace_id,
      botId: null,
      kind: 'builder',
      issuedVia: 'pairing',
    });
    const list = (key: string) => mcpPost({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { key });
    expect((await list(paired)).status).toBe(200);
    const fresh = await rotateKey(testDb(), createSecretBox(stackInfo().secretEncryptionKey), bot.bot_id, 'builder');
    for (const old of [bot.keys.builder_key, paired])
      expect((await list(old)).body).toMatchObject({ code: 'invalid_key' });
    expect((await list(fresh.key)).status).toBe(200);
    expect((await list(other.keys.builder_key)).status).toBe(200);
  });
});

describe('the builder reaches every capability through the services', () => {
  it('scans, triggers, webhook, actions, run log and key revocation: at once or after "yes", as classified', async () => {
    const bot = await newBot({ botName: 'Everything' });
    const client = await connect(bot.keys.builder_key, 'auto');
    const one = async (rows: string, params: unknown[] = [bot.bot_id]) => (await testDb().query(rows, params)).rows;
    try {
      // At once: a manual trigger, a scan of the agent's own site (one its widget is allowed on), reading the run log
      // and the agent.
      await testDb().query(`UPDATE bots SET allowed_origins = ARRAY['http://127.0.0.1:9'] WHERE id = $1`, [bot.bot_id]);
      const marker = await script([
        {
          toolCalls: [
            call('create_trigger', { agent_id: bot.bot_id, trigger: { kind: 'manual', task: 'Digest' } }),
            call('start_site_scan', { agent_id: bot.bot_id, scan: { url: 'http://127.0.0.1:9/', refresh_days: 0 } }),
            call('read_runs', { agent_id: bot.bot_id }),
            call('get_agent', { agent_id: bot.bot_id }),
          ],
        },
        { text: 'Trigger made, scan started.' },
      ]);
      const first = await constructor(client, `${marker} set things up`, `all-${randomUUID()}`);
      expect(textOf(first)).not.toContain('[Awaiting confirmation');
      const [trigger] = await one(`SELECT id, enabled FROM triggers WHERE bot_id = $1`);
      expect(trigger.enabled).toBe(true);
      expect(await one(`SELECT 1 FROM site_scans WHERE bot_id = $1`)).toHaveLength(1);
      const toolAnswers = async (m: string) =>
        (
          (await fakeRequests(m.slice('[[fake:script:'.length, -2))).at(-1)!.body.messages as {
            role: string;
            content: string;
          }[]
        )
          .filter((x) => x.role === 'tool')
          .map((x) => x.content);
      const answers = await toolAnswers(marker);
      expect(answers[2]).toContain('"runs"');
      expect(answers[3]).toContain('"name":"Everything"');

      // Turning a trigger off is at once; each of the others waits for "yes", then is applied exactly.
      const consented: [string, Record<string, unknown>, () => Promise<void>][] = [
        ['disable_trigger', { agent_id: bot.bot_id, trigger_id: trigger.id }, async () => undefined],
        [
          'enable_trigger',
          { agent_id: bot.bot_id, trigger_id: trigger.id },
          async () => expect((await one(`SELECT enabled FROM triggers WHERE bot_id = $1`))[0].enabled).toBe(true),
        ],
        [
          'update_trigger',
          { agent_id: bot.bot_id, trigger_id: trigger.id, changes: { task: 'Weekly digest' } },
          async () => expect((await one(`SELECT task FROM triggers WHERE bot_id = $1`))[0].task).toBe('Weekly digest'),
        ],
        [
          'set_handoff_webhook',
          { agent_id: bot.bot_id, url: 'https://hooks.example.com/handoff' },
          async () =>
            expect((await one(`SELECT handoff_webhook_url FROM bots WHERE id = $1`))[0].handoff_webhook_url).toBe(
              'https://hooks.example.com/handoff',
            ),
        ],
        [
          'add_http_action',
          {
            agent_id: bot.bot_id,
            action: { name: 'lookup_order', description: 'Finds an order', url: 'https://shop.example.com/orders' },
          },
          async () =>
            expect(await one(`SELECT name FROM bot_actions WHERE bot_id = $1`)).toEqual([{ name: 'lookup_order' }]),
        ],
      ];
      for (const [name, args, applied] of consented) {
        const m = await script([{ toolCalls: [call(name, args)] }, { text: `About ${name}.` }]);
        const thread = `${name}-${randomUUID()}`;
        const asked = await constructor(client, `${m} please ${name}`, thread);
        if (name === 'disable_trigger') {
          expect(textOf(asked)).not.toContain('[Awaiting confirmation');
          expect((await one(`SELECT enabled FROM triggers WHERE bot_id = $1`))[0].enabled).toBe(false);
          continue;
        }
        expect(textOf(asked)).toMatch(/\[Awaiting confirmation: .+\]$/);
        await constructor(client, 'yes', thread);
        await applied();
      }

      // Revoking builder keys is irreversible: asked first; after "yes" this very key stops working.
      const m = await script([
        { toolCalls: [call('revoke_builder_keys', {})] },
        { text: 'This disconnects every program.' },
      ]);
      const thread = `revoke-${randomUUID()}`;
      const asked = await constructor(client, `${m} cut every program off`, thread);
      expect(textOf(asked)).toMatch(/\[Awaiting confirmation: revoke every builder key/);
      const done = await constructor(client, 'yes', thread);
      expect(textOf(done)).toContain('Revoked 1 builder key');
      await expect(client.listTools()).rejects.toThrow();
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
