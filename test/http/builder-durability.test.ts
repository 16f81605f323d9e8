import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  type OwnPlatform,
  newBot,
  startOwnPlatform,
  testDb,
  waitUntil,
  type FakeScriptStep,
  scriptFakeModel,
  toolText as textOf,
} from '../support/helpers';

/** Builder tests that need a platform of their own: a worker that dies mid-turn, and no LLM at all. */

async function connect(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'builder-durability', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/v1/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function script(steps: FakeScriptStep[]): Promise<string> {
  return (await scriptFakeModel(steps, 'builder-crash')).marker;
}

describe('a worker killed in the middle of a builder turn', () => {
  let own: OwnPlatform;

  beforeAll(async () => {
    own = await startOwnPlatform('builder-crash', { LLM_TURN_TIMEOUT_MS: '20000' });
  }, 120_000);
  afterAll(async () => own?.stop());

  it('the turn completes after a new worker starts; what was done is not done again; the result is delivered', async () => {
    const bot = await newBot();
    const client = await connect(own.baseUrl, bot.keys.builder_key);
    try {
      const marker = await script([
        {
          toolCalls: [
            // Not deduplicated by itself (unlike knowledge texts): a re-run of this step would make a second trigger.
            {
              name: 'create_trigger',
              arguments: JSON.stringify({ agent_id: bot.bot_id, trigger: { kind: 'manual', task: 'Survive crashes' } }),
            },
          ],
        },
        // The model's second step is slow: the worker dies while waiting for it. Its retry gets the next step.
        { text: 'Made it (first attempt).', delayMs: 4000 },
        { text: 'Made the trigger, after the restart.' },
      ]);
      const pending = client.callTool({
        name: 'constructor',
        arguments: { message: `${marker} add a manual trigger` },
      });
      await waitUntil('the tool call of the first step', async () => {
        const r = await testDb().query(`SELECT 1 FROM triggers WHERE bot_id = $1`, [bot.bot_id]);
        return r.rowCount === 1;
      });
      await new Promise((r) => setTimeout(r, 500));
      await own.restartWorker();

      const result = await pending;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('Made the trigger, after the restart.');
      const rows = await testDb().query(`SELECT 1 FROM triggers WHERE bot_id = $1`, [bot.bot_id]);
      expect(rows.rowCount).toBe(1);
    } finally {
      await client.close();
    }
  }, 90_000);
});

describe('the builder without an LLM', () => {
  let own: OwnPlatform;

  beforeAll(async () => {
    own = await startOwnPlatform('builder-no-llm', { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined });
  }, 120_000);
  afterAll(async () => own?.stop());

  it('constructor says clearly that it needs one and changes nothing; agents and incidents still work', async () => {
    const bot = await newBot({ botName: 'Quiet' });
    const client = await connect(own.baseUrl, bot.keys.builder_key);
    try {
      const result = await client.callTool({ name: 'constructor', arguments: { message: 'rename the agent to Loud' } });
      expect(textOf(result)).toMatch(/builder needs an LLM.*OPENAI_API_KEY.*Nothing was changed/);
      const agents = await client.callTool({ name: 'agents', arguments: {} });
      expect(agents.isError).toBeFalsy();
      expect((agents.structuredContent as { agents: { name: string }[] }).agents.map((a) => a.name)).toEqual(['Quiet']);
      const incidents = await client.callTool({ name: 'incidents', arguments: { agent_id: bot.bot_id } });
      expect(incidents.isError).toBeFalsy();
      expect((incidents.structuredContent as { incidents: { kind: string }[] }).incidents.map((i) => i.kind)).toContain(
        'knowledge_empty',
      );
    } finally {
      await client.close();
    }
  });
});
