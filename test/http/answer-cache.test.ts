import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { fakeRequests, http, newBot, ownerSession, sseFrames, testDb } from '../support/helpers';

/**
 * The answer cache the contract names ("the bot's answer cache is reset" by a knowledge write): a question already
 * answered with the same knowledge, settings and model, on the same page and after the same conversation, is answered
 * without a model call — JSON and stream alike — and is still a run in the log, charged its base credit.
 */
const ask = (bot: BootstrapResult, message: string, extra: Record<string, unknown> = {}) =>
  http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: randomUUID(), message, ...extra } });

async function runsOf(botId: string) {
  const res = await testDb().query(`SELECT model, credits, status FROM runs WHERE bot_id = $1 ORDER BY started_at`, [
    botId,
  ]);
  return res.rows as { model: string; credits: number; status: string }[];
}

describe('answer cache', () => {
  it('answers a repeated question without the model, in JSON and stream, and logs a run of one credit', async () => {
    const bot = await newBot();
    const tag = `cache-${randomUUID()}`;
    const question = `[[fake:tag:${tag}]] What are your opening hours?`;
    const first = await ask(bot, question);
    expect(first.status).toBe(200);
    // Case, spacing and the closing question mark do not make another question.
    const second = await ask(bot, `[[fake:tag:${tag}]]   what are your OPENING hours`);
    expect(second.body.answer).toBe(first.body.answer);
    const streamed = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: question },
    });
    // Replayed a few words a fragment (test/unit/answer-replay.test.ts); the worker's publisher may send them in one
    // flush when another stream's flush is in flight, as it does under load.
    expect(streamed.frames.filter((f) => 'delta' in f).length).toBeGreaterThanOrEqual(1);
    expect(streamed.frames.map((f) => f.delta ?? '').join('')).toBe(first.body.answer);
    expect(streamed.frames.at(-1)).toMatchObject({ done: true });
    expect(await fakeRequests(tag)).toHaveLength(1);

    const runs = await runsOf(bot.bot_id);
    expect(runs).toHaveLength(3);
    expect(runs.every((r) => r.status === 'done')).toBe(true);
    expect(runs.slice(1).map((r) => [r.model, r.credits])).toEqual([
      ['cache:fake-model', 1],
      ['cache:fake-model', 1],
    ]);
    expect(runs[0].model).toBe('fake-model');
  });

  it('a knowledge write, a delete and a settings change each reset it', async () => {
    const bot = await newBot();
    const session = await ownerSession(bot);
    const tag = `reset-${randomUUID()}`;
    const question = `[[fake:tag:${tag}]] Do you deliver?`;
    const calls = async () => (await fakeRequests(tag)).length;

    await ask(bot, question);
    await ask(bot, question);
    expect(await calls()).toBe(1);

    await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      body: { source_id: 'delivery', text: 'FACT: we deliver' },
    });
    await ask(bot, question);
    expect(await calls()).toBe(2);
    await ask(bot, question);
    expect(await calls()).toBe(2);

    await http('/v1/api/knowledge/delivery', { method: 'DELETE', key: bot.keys.secret_key });
    await ask(bot, question);
    expect(await calls()).toBe(3);

    await http(`/v1/dashboard/bots/${bot.bot_id}`, {
      method: 'PATCH',
      body: { instructions: 'Be brief.' },
      headers: session,
    });
    await ask(bot, question);
    expect(await calls()).toBe(4);
  });

  it('another page, another conversation so far, or an expired entry is not answered from it', async () => {
    const bot = await newBot();
    const tag = `scope-${randomUUID()}`;
    const question = `[[fake:tag:${tag}]] How much is shipping?`;
    const calls = async () => (await fakeRequests(tag)).length;
    await ask(bot, question, { page_context: 'Product page: blue kettle' });
    await ask(bot, question, { page_context: 'Product page: red kettle' });
    expect(await calls()).toBe(2);

    // The same question after another exchange depends on it.
    const sid = randomUUID();
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: sid, message: 'I live in Norway' } });
    await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: sid, message: question } });
    expect(await calls()).toBe(3);

    await ask(bot, question);
    await testDb().query(`UPDATE answer_cache SET expires_at = now() - interval '1 second' WHERE bot_id = $1`, [
      bot.bot_id,
    ]);
    await ask(bot, question);
    expect(await calls()).toBe(5);
  });

  it("is looked up only for a question an entry answers: one without the question's key is not read", async () => {
    const bot = await newBot();
    const tag = `question-${randomUUID()}`;
    const question = `[[fake:tag:${tag}]] Can I pay by card?`;
    const calls = async () => (await fakeRequests(tag)).length;
    const first = await ask(bot, question);
    await ask(bot, question);
    expect(await calls()).toBe(1);
    const entries = () =>
      testDb().query<{ question_key: Buffer | null }>(`SELECT question_key FROM answer_cache WHERE bot_id = $1`, [
        bot.bot_id,
      ]);
    expect((await entries()).rows.map((r) => r.question_key?.length)).toEqual([32]);

    // An entry whose question is not known (as one written before the question key was): the turn's first statement
    // finds nothing for this question, so the entry, although its full key matches, is not looked up.
    await testDb().query(`UPDATE answer_cache SET question_key = NULL WHERE bot_id = $1`, [bot.bot_id]);
    const again = await ask(bot, question);
    expect(await calls()).toBe(2);
    expect(again.body.answer).toBe(first.body.answer);
    // Answered by the model, the entry is written again with its question key, and read from then on.
    expect((await entries()).rows.map((r) => r.question_key?.length)).toEqual([32]);
    await ask(bot, question);
    expect(await calls()).toBe(2);
  });

  it('a question handed to a person never reaches it', async () => {
    const bot = await newBot();
    const tag = `handoff-${randomUUID()}`;
    const sid = randomUUID();
    await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: sid } });
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: sid, message: `[[fake:tag:${tag}]] hello?` },
    });
    expect(res.body).toMatchObject({ answer: '', handoff: true });
    expect((await testDb().query(`SELECT 1 FROM answer_cache WHERE bot_id = $1`, [bot.bot_id])).rowCount).toBe(0);
  });
});
