/**
 * The dashboard's test chat streamed (POST /v1/dashboard/bots/{id}/test-chat/stream): the frames of a chat stream,
 * the signed-in owner confirmed as the bot's administrator, the turn in the transcript; operators and other
 * workspaces refused before any stream starts.
 */
import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession, sseFrames } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

describe('the test chat, streamed', () => {
  it('streams pieces and the end frame, keeps the session, and refuses operators and strangers', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const path = `/v1/dashboard/bots/${bot.bot_id}/test-chat/stream`;
    const first = await sseFrames(path, {
      key: '',
      headers: owner,
      body: { message: '[[fake:pace-50-300-4]] Do you ship abroad?' },
    });
    expect(first.status).toBe(200);
    const deltas = first.frames.filter((f) => typeof f.delta === 'string');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((f) => f.delta).join('')).toBe('Fake answer: Do you ship abroad?');
    const end = first.frames.at(-1)!;
    expect(end).toMatchObject({ done: true, handoff: false });
    const sessionId = end.session_id as string;

    // The same conversation goes on, and its transcript holds both turns.
    const second = await sseFrames(path, {
      key: '',
      headers: owner,
      body: { message: 'And to Norway?', session_id: sessionId },
    });
    expect(second.frames.at(-1)).toMatchObject({ done: true, session_id: sessionId });
    const transcript = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${sessionId}`, { headers: owner });
    expect(transcript.body.messages.filter((m: { author: string }) => m.author === 'visitor')).toHaveLength(2);
    expect(transcript.body.visitor_user).toMatch(/^dashboard:/);

    const operator = await sessionOf(await addMember(bot, 'operator'));
    const refused = await sseFrames(path, { key: '', headers: operator, body: { message: 'Hi' } });
    expect(refused.status).toBe(403);
    const stranger = await sseFrames(path, {
      key: '',
      headers: await ownerSession(await newBot()),
      body: { message: 'Hi' },
    });
    expect(stranger.status).toBe(404);
    expect((await sseFrames(path, { key: '', headers: owner, body: { message: '' } })).status).toBe(400);
  });
});
