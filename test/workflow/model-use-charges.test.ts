import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type BuilderDeps, createBuilderActivities } from '../../activities/builder';
import { createConversationActivities } from '../../activities/conversation';
import type { BootstrapResult } from '../../lib/accounts/service';
import { createCreditService } from '../../lib/credits/service';
import { createOpenAiLlm } from '../../lib/llm';
import type { TransitionInput } from '../../workflows/contracts/conversation';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * A retried activity charges the platform's model once (STYLE.md 10; issue 40, item 4): the hand-over's transition
 * that wrote a model's briefing, and a builder turn's charge, each run twice as a retry would, against the stack's real
 * Postgres and the fake OpenAI server.
 */
const credits = () => createCreditService({ db: testDb() });

async function ledgerOf(bot: BootstrapResult, reason: string): Promise<number[]> {
  const res = await testDb().query<{ amount: number }>(
    `SELECT amount FROM credit_ledger WHERE workspace_id = $1 AND reason = $2 ORDER BY id`,
    [bot.workspace_id, reason],
  );
  return res.rows.map((r) => r.amount);
}

describe('a retried activity charges once', () => {
  it("the hand-over that wrote the model's briefing", async () => {
    const bot = await newBot();
    const session = randomUUID();
    expect(
      (await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: session, message: 'hello' } }))
        .status,
    ).toBe(200);
    const llm = createOpenAiLlm({ apiKey: 'test', baseURL: stackInfo().fakeOpenAIUrl, model: 'fake-model' });
    const { applyTransition } = createConversationActivities({ db: testDb(), llm, defaultModel: 'fake-model' });
    const at = Date.now();
    const input: TransitionInput = {
      botId: bot.bot_id,
      sessionId: session,
      status: 'waiting',
      escalated: true,
      escalationReason: 'requested',
      messages: [{ id: `msg_${randomUUID()}`, author: 'visitor', text: 'A person, please: parcel 42 is lost', at }],
      event: { deliveryId: `dlv_${randomUUID()}`, kind: 'escalated', at },
    };
    const before = await credits().balance(bot.workspace_id);
    await applyTransition(input);
    const [charge] = await ledgerOf(bot, 'operator briefing');
    expect(charge).toBeLessThan(0);
    await applyTransition(input);
    expect(await ledgerOf(bot, 'operator briefing')).toEqual([charge]);
    expect(await credits().balance(bot.workspace_id)).toBe(before + charge);
  });

  it("a builder turn's charge", async () => {
    const bot = await newBot();
    const { chargeBuilderTurn } = createBuilderActivities({
      llm: null,
      credits: credits(),
      // The charge reaches nothing of the builder's tools.
      builder: {} as BuilderDeps['builder'],
    });
    const before = await credits().balance(bot.workspace_id);
    const turn = {
      workspaceId: bot.workspace_id,
      turnId: `bt_${randomUUID()}`,
      promptTokens: 1800,
      completionTokens: 250,
    };
    await chargeBuilderTurn(turn);
    await chargeBuilderTurn(turn);
    // 1 + ceil(2 050 / 1 000)
    expect(await ledgerOf(bot, 'builder turn')).toEqual([-4]);
    expect(await credits().balance(bot.workspace_id)).toBe(before - 4);
  });
});
