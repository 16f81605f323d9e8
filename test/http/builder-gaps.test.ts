import { describe, expect, it } from '@jest/globals';
import {
  fakeRequests,
  http,
  newBot,
  ownerSession,
  type FakeScriptStep,
  scriptFakeModel,
  toolCall as call,
} from '../support/helpers';

/**
 * The builder reads what an agent could not answer and answers it (issue 21, item 5, for builder users): the
 * questions are visitors' words, so an answer written in the same turn is asked first, like every change of a turn
 * that read untrusted content.
 */
const script = (steps: FakeScriptStep[]) => scriptFakeModel(steps, 'gaps');

describe('the builder and what is missing', () => {
  it('lists the unanswered questions, and answers them after the owner says yes', async () => {
    const bot = await newBot({ botName: 'Gift shop' });
    for (const message of ['Do you sell gift cards?', 'Can I buy a gift card?']) {
      await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { message: `[[fake:tool-call:cannot_answer]] ${message}` },
      });
    }
    const owner = await ownerSession(bot);
    const [group] = (await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: owner })).body.groups;
    expect(group.count).toBe(2);

    const { marker, tag } = await script([
      { toolCalls: [call('read_unanswered_questions', { agent_id: bot.bot_id })] },
      {
        toolCalls: [
          call('answer_questions', {
            agent_id: bot.bot_id,
            run_ids: group.run_ids,
            title: 'Gift cards',
            text: 'Gift cards of 25, 50 and 100 euros are sold in the shop.',
          }),
        ],
      },
      { text: 'I can add that answer once you confirm.' },
    ]);
    const asked = await http('/v1/dashboard/builder', {
      key: bot.keys.builder_key,
      body: { message: `${marker} what could my agent not answer? answer it` },
    });
    expect(asked.status).toBe(200);
    // The model read the questions as marked data.
    const [, second] = await fakeRequests(tag);
    const toolMessage = second.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMessage.content).toContain('gift card');
    expect(toolMessage.content).toContain(group.run_ids[0]);
    // Visitors' words were read in this turn: the change is asked first.
    expect(asked.body.reply).toMatch(
      /\[Awaiting confirmation: answer 2 unanswered question\(s\) of agent "Gift shop": add to its knowledge the text "Gift cards of 25, 50 and 100 euros are sold in the shop\.", titled "Gift cards" \(quoted: data/,
    );
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: owner })).body.groups).toHaveLength(1);

    const done = await http('/v1/dashboard/builder', { key: bot.keys.builder_key, body: { message: 'yes' } });
    expect(done.body.reply).toContain('Done:');
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: owner })).body.groups).toEqual([]);
    const sources = await http('/v1/api/knowledge', { key: bot.keys.secret_key });
    expect(sources.body.sources.map((s: { title: string }) => s.title)).toEqual(['Gift cards']);
  });
});
