/**
 * Assignment and "who is replying" in the dashboard's inbox: a conversation is assigned to a person of the workspace
 * (or taken by the first who replies from the dashboard), the list filters by it, and an operator sees another one
 * typing a reply before writing a second answer.
 */
import { describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession, testDb } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

async function handedOver(bot: BootstrapResult): Promise<string> {
  const chat = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'I need a human please' } });
  expect(chat.status).toBe(200);
  expect(chat.body.handoff).toBe(true);
  return chat.body.session_id;
}

describe('assignment in the inbox', () => {
  it('assigns to a teammate or nobody, lists by it, and a dashboard reply takes an unassigned conversation', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const owner = await ownerSession(bot);
    const bo = await addMember(bot, 'operator');
    const operator = await sessionOf(bo);
    const [first, second] = [await handedOver(bot), await handedOver(bot)];
    const thread = (sid: string) => `/v1/dashboard/bots/${bot.bot_id}/threads/${sid}`;
    const assign = (session: Record<string, string>, sid: string, user_id: string | null) =>
      http(`${thread(sid)}/assign`, { headers: session, body: { user_id } });
    const list = async (session: Record<string, string>, assignee?: string) => {
      const res = await http(`/v1/dashboard/inbox?bot_id=${bot.bot_id}${assignee ? `&assignee=${assignee}` : ''}`, {
        headers: session,
      });
      expect(res.status).toBe(200);
      return res.body.threads as { session_id: string; assignee: { id: string; name: string } | null }[];
    };

    // Nobody at first.
    expect((await list(owner)).map((t) => t.assignee)).toEqual([null, null]);
    expect(await list(owner, 'me')).toEqual([]);

    // The operator assigns the first to the owner (any role may assign); the owner is named.
    const owners = await testDb().query(`SELECT id FROM users WHERE workspace_id = $1 AND role = 'owner'`, [
      bot.workspace_id,
    ]);
    const ownerId: string = owners.rows[0].id;
    const assigned = await assign(operator, first, ownerId);
    expect(assigned.status).toBe(200);
    expect(assigned.body).toEqual({ assignee: { id: ownerId, name: 'Ana Owner' } });
    expect((await list(owner, 'me')).map((t) => t.session_id)).toEqual([first]);
    expect((await list(operator, 'nobody')).map((t) => t.session_id)).toEqual([second]);
    const transcript = await http(thread(first), { headers: operator });
    expect(transcript.body).toMatchObject({ assignee: { id: ownerId, name: 'Ana Owner' }, replying: null });

    // A reply from the dashboard takes an unassigned conversation, and leaves an assigned one to its person.
    expect((await http(`${thread(second)}/reply`, { headers: operator, body: { text: 'Hello' } })).status).toBe(200);
    expect((await http(`${thread(first)}/reply`, { headers: operator, body: { text: 'Hi too' } })).status).toBe(200);
    const byId = Object.fromEntries((await list(owner)).map((t) => [t.session_id, t.assignee?.id ?? null]));
    expect(byId).toEqual({ [first]: ownerId, [second]: bo.userId });
    // The operator's name is their e-mail, as they gave no name.
    expect((await list(operator, 'me'))[0].assignee).toEqual({ id: bo.userId, name: bo.email });

    // To nobody again.
    expect((await assign(owner, first, null)).body).toEqual({ assignee: null });
    expect((await list(owner, 'me')).map((t) => t.session_id)).toEqual([]);
  });

  it('refuses a person of another workspace, a bad body, and another workspace’s conversation', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const sid = await handedOver(bot);
    const other = await newBot();
    const stranger = await addMember(other, 'operator');
    const url = `/v1/dashboard/bots/${bot.bot_id}/threads/${sid}/assign`;

    const foreign = await http(url, { headers: owner, body: { user_id: stranger.userId } });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'bad_request', error: expect.stringMatching(/user_id/) });
    expect((await http(url, { headers: owner, body: {} })).status).toBe(400);
    expect((await http(url, { headers: owner, body: { user_id: 42 } })).status).toBe(400);
    const unknownSession = await http(
      `/v1/dashboard/bots/${bot.bot_id}/threads/00000000-0000-4000-8000-000000000000/assign`,
      { headers: owner, body: { user_id: null } },
    );
    expect(unknownSession.status).toBe(404);
    expect((await http(url, { headers: await ownerSession(other), body: { user_id: null } })).status).toBe(404);
    const row = await testDb().query(`SELECT assignee_user_id FROM conversations WHERE session_id = $1`, [sid]);
    expect(row.rows[0].assignee_user_id).toBeNull();
  });

  it('shows an operator who of the team is typing a reply, never themselves, and not after the reply', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const owner = await ownerSession(bot);
    const operator = await sessionOf(await addMember(bot, 'operator'));
    const sid = await handedOver(bot);
    const thread = `/v1/dashboard/bots/${bot.bot_id}/threads/${sid}`;

    expect((await http(thread, { headers: operator })).body.replying).toBeNull();
    expect((await http(`${thread}/typing`, { method: 'POST', headers: owner })).status).toBe(200);
    expect((await http(thread, { headers: operator })).body.replying).toMatchObject({ name: 'Ana Owner' });
    expect((await http(thread, { headers: owner })).body.replying).toBeNull();

    // The operator API's typing names nobody: the team sees no one replying.
    await http(`/v1/api/operator/threads/${sid}/typing`, { method: 'POST', key: bot.keys.secret_key });
    expect((await http(thread, { headers: operator })).body.replying).toBeNull();

    // A reply ends the typing signal.
    await http(`${thread}/typing`, { method: 'POST', headers: owner });
    expect((await http(`${thread}/reply`, { headers: owner, body: { text: 'On it' } })).status).toBe(200);
    expect((await http(thread, { headers: operator })).body.replying).toBeNull();
  });
});
