import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { BUILT_IN_MODELS } from '../../lib/billing/models';
import { creditsFor } from '../../lib/runs/bookkeeping';
import { agentctl, http, newBot, ownerSession, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Cost abuse (issue 17, item 8; docs/decisions/107-model-catalogue.md): an agent's model is one of a catalogue,
 * allowed per plan, and a run's credits are weighted by the model's price. The test stack's default model is
 * `fake-model` (weight 1, every plan); `gpt-4o` is built in at its OpenAI price relative to gpt-4o-mini, paid plans only.
 */

const env = () => ({ DATABASE_URL: stackInfo().databaseUrl, SECRET_ENCRYPTION_KEY: stackInfo().secretEncryptionKey });
const setPlan = async (workspaceId: string, plan: string) =>
  expect((await agentctl(['billing', 'plan', '--workspace', workspaceId, '--plan', plan], env())).code).toBe(0);
const GPT_4O = BUILT_IN_MODELS.find((m) => m.name === 'gpt-4o')!;

/** A question long enough that its tokens, weighted, cost several credits; unique so no cached answer serves it. */
const longQuestion = () => `${randomUUID()} ${'please tell me about the shipping options '.repeat(40)}`;

async function lastRun(botId: string) {
  const res = await testDb().query<{
    id: string;
    model: string;
    prompt_tokens: number;
    completion_tokens: number;
    credits: number;
  }>(
    `SELECT id, model, prompt_tokens, completion_tokens, credits FROM runs WHERE bot_id = $1 ORDER BY started_at DESC LIMIT 1`,
    [botId],
  );
  return res.rows[0];
}

describe('models per plan, credits per model', () => {
  it('refuses free text and models above the plan, allows them after an upgrade, and charges by the weight', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const patch = (model: string | null) =>
      http(`/v1/dashboard/bots/${bot.bot_id}`, { method: 'PATCH', headers: owner, body: { model } });

    const choices = await http('/v1/dashboard/models', { headers: owner });
    expect(choices.status).toBe(200);
    const free = (choices.body.models as { name: string }[]).map((m) => m.name);
    expect(choices.body).toMatchObject({ default_model: 'fake-model', plan: 'free' });
    expect(free).toEqual(expect.arrayContaining(['fake-model', 'gpt-4o-mini', 'gpt-4.1-mini']));
    expect(free).not.toContain('gpt-4o');

    // Free text: not a model of the catalogue.
    const unknown = await patch('my-own-finetune');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'bad_request', allowed_models: free });
    expect(unknown.body.error).toContain('gpt-4o-mini');
    // An expensive model on the Free plan.
    const expensive = await patch('gpt-4o');
    expect([expensive.status, expensive.body.code]).toEqual([400, 'bad_request']);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: owner })).body.model).toBeNull();

    // On Pro it is allowed, and a chat on it costs its weight.
    await setPlan(bot.workspace_id, 'pro');
    const upgraded = await patch('gpt-4o');
    expect([upgraded.status, upgraded.body.model]).toEqual([200, 'gpt-4o']);
    const before = await http('/v1/billing/usage', { headers: owner });
    const answered = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: longQuestion() },
    });
    expect(answered.status).toBe(200);
    const run = await lastRun(bot.bot_id);
    expect(run.model).toBe('gpt-4o');
    const tokens = run.prompt_tokens + run.completion_tokens;
    const weighted = 1 + Math.ceil(Math.round(tokens * GPT_4O.weight) / 1000);
    expect(GPT_4O.weight).toBeGreaterThanOrEqual(16);
    expect(run.credits).toBe(weighted);
    expect(run.credits).toBe(creditsFor(run.prompt_tokens, run.completion_tokens, GPT_4O.weight));
    // Far more than the unweighted price (the same tokens on the default model).
    expect(run.credits).toBeGreaterThan(creditsFor(run.prompt_tokens, run.completion_tokens) * 4);
    const ledger = await testDb().query(`SELECT amount FROM credit_ledger WHERE run_id = $1`, [run.id]);
    expect(ledger.rows[0].amount).toBe(-weighted);
    const after = await http('/v1/billing/usage', { headers: owner });
    expect(before.body.credits.balance - after.body.credits.balance).toBe(weighted);

    // Back on Free: the agent keeps its setting, but runs use the default model at the default's price.
    await setPlan(bot.workspace_id, 'free');
    const downgraded = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: longQuestion() },
    });
    expect(downgraded.status).toBe(200);
    const fallback = await lastRun(bot.bot_id);
    expect(fallback.model).toBe('fake-model');
    expect(fallback.credits).toBe(creditsFor(fallback.prompt_tokens, fallback.completion_tokens));
    // Null (the default) is always allowed.
    expect((await patch(null)).status).toBe(200);
  });

  it('the weighted price rounds whole weighted tokens up to started thousands', () => {
    expect(creditsFor(0, 0, 16.7)).toBe(1);
    expect(creditsFor(600, 400, 2.7)).toBe(4); // 2 700 weighted tokens: 3 started thousands
    expect(creditsFor(600, 400, 1)).toBe(2);
    expect(creditsFor(30, 30, 16.7)).toBe(3); // 1 002
  });
});
