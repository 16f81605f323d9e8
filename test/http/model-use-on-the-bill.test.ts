import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { createCreditService } from '../../lib/credits/service';
import {
  type FakeRequest,
  fakeRequests,
  http,
  mcpPost,
  newBot,
  scriptFakeModel,
  testDb,
  toolCall as call,
} from '../support/helpers';

/**
 * The platform's model on the workspace's bill (issue 40, item 4; docs/decisions/137-briefings-and-builder-on-the-bill.md):
 * the operator's briefing the model writes and every builder turn that asks the model are charged as runs are,
 * `1 + ceil(tokens / 1000)` (the default model weighs 1); with no credits left the briefing is the extractive one and
 * the builder answers that there are no credits, neither asking the model.
 */
const balanceOf = (bot: BootstrapResult) => createCreditService({ db: testDb() }).balance(bot.workspace_id);

async function ledgerOf(bot: BootstrapResult, reason: string): Promise<number[]> {
  const res = await testDb().query<{ amount: number }>(
    `SELECT amount FROM credit_ledger WHERE workspace_id = $1 AND reason = $2 ORDER BY id`,
    [bot.workspace_id, reason],
  );
  return res.rows.map((r) => r.amount);
}

/** What the model's answers to these requests cost, as a run's do (README, Credits). */
function creditsOf(requests: FakeRequest[]): number {
  const tokens = requests.reduce((n, r) => n + r.usage!.prompt_tokens + r.usage!.completion_tokens, 0);
  return 1 + Math.ceil(tokens / 1000);
}

const chat = (bot: BootstrapResult, body: Record<string, unknown>) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body });
const briefingOf = async (bot: BootstrapResult, session: string) =>
  (await http(`/v1/api/operator/threads/${session}`, { key: bot.keys.secret_key })).body.briefing;
const isBriefingRequest = (r: FakeRequest) =>
  String(r.body.messages[0].content).startsWith('You brief a person from the support team');

describe("the operator's briefing on the bill", () => {
  it('a workspace without credits loops hand-over and resolve: extractive briefings, and the model never asked', async () => {
    // As a workspace made by sign-up whose owner has not confirmed the address: a balance of 0.
    const bot = await newBot({ initialCredits: 0 });
    expect(await balanceOf(bot)).toBe(0);
    const session = randomUUID();
    const tag = `unpaid-${randomUUID()}`;
    for (let i = 1; i <= 3; i++) {
      const handed = await chat(bot, {
        session_id: session,
        message: `[[fake:tag:${tag}]] Summarise this for free, round ${i}`,
        escalate: true,
      });
      expect(handed.body.handoff).toBe(true);
      const briefing = await briefingOf(bot, session);
      expect(briefing).toMatchObject({ source: 'extractive' });
      expect(briefing.text).toContain(`round ${i}”`);
      const resolved = await http(`/v1/api/operator/threads/${session}/resolve`, {
        method: 'POST',
        key: bot.keys.secret_key,
      });
      expect(resolved.status).toBe(200);
    }
    expect(await fakeRequests(tag)).toEqual([]);
    expect(await balanceOf(bot)).toBe(0);
    expect(await ledgerOf(bot, 'operator briefing')).toEqual([]);
  });

  it("a workspace with credits pays for the model's briefing as for a run", async () => {
    const bot = await newBot();
    const session = randomUUID();
    const tag = `paid-${randomUUID()}`;
    await chat(bot, { session_id: session, message: `[[fake:tag:${tag}]] Do you ship to Norway?` });
    const before = await balanceOf(bot);
    const handed = await chat(bot, { session_id: session, message: 'My parcel 42 is lost', escalate: true });
    expect(handed.body.handoff).toBe(true);
    expect((await briefingOf(bot, session)).source).toBe('model');

    const asked = (await fakeRequests(tag)).filter(isBriefingRequest);
    expect(asked).toHaveLength(1);
    const cost = creditsOf(asked);
    expect(await ledgerOf(bot, 'operator briefing')).toEqual([-cost]);
    expect(await balanceOf(bot)).toBe(before - cost);
  });
});

describe('builder turns on the bill', () => {
  const builder = (bot: BootstrapResult, message: string) =>
    http('/v1/dashboard/builder', { key: bot.keys.builder_key, body: { message } });

  it('a turn is charged for the tokens of all its model steps, once', async () => {
    const bot = await newBot();
    const { marker, tag } = await scriptFakeModel(
      [{ toolCalls: [call('list_agents', {})] }, { text: 'You have one agent, Support.' }],
      'billed',
    );
    const before = await balanceOf(bot);
    const res = await builder(bot, `${marker} which agents do I have?`);
    expect(res.status).toBe(200);
    expect(res.body.reply).toContain('You have one agent, Support.');

    const steps = await fakeRequests(tag);
    expect(steps).toHaveLength(2);
    const cost = creditsOf(steps);
    expect(cost).toBeGreaterThan(1);
    expect(await ledgerOf(bot, 'builder turn')).toEqual([-cost]);
    expect(await balanceOf(bot)).toBe(before - cost);
  });

  it('with no credits left a turn says so, over HTTP and MCP, without asking the model', async () => {
    const bot = await newBot({ initialCredits: 0 });
    const { marker, tag } = await scriptFakeModel([{ text: 'I should not have been asked.' }], 'unpaid');

    const res = await builder(bot, `${marker} rename my agent to Helpdesk`);
    expect(res.status).toBe(200);
    expect(res.body.reply).toMatch(/^No credits left: /);
    expect(res.body.reply).toContain('nothing more was changed');

    const rpc = await mcpPost(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'constructor', arguments: { message: `${marker} rename my agent to Helpdesk` } },
      },
      { key: bot.keys.builder_key },
    );
    expect(rpc.status).toBe(200);
    expect(rpc.body.result.content[0].text).toMatch(/^No credits left: /);

    expect(await fakeRequests(tag)).toEqual([]);
    expect(await balanceOf(bot)).toBe(0);
    expect(await ledgerOf(bot, 'builder turn')).toEqual([]);
  });
});
