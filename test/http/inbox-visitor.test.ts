/**
 * The inbox's visitor panel: who the visitor is (the site's id, the contact they left, how they rated the help) and
 * their other conversations with the same agent; the list names a visitor by the contact they left.
 */
import { describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { signVisitorConfirmation } from '../../lib/identity';
import { http, newBot, ownerSession, testDb } from '../support/helpers';
import { widgetCall, widgetSession } from '../support/widget';

async function visit(bot: BootstrapResult, opts: { user?: string; contact?: Record<string, string> } = {}) {
  const visitor = await widgetSession(bot);
  const call = (path: string, body: Record<string, unknown>) =>
    widgetCall(bot, path, {
      method: 'POST',
      body: { session_id: visitor.session_id, ...body },
      token: visitor.visitor_token,
    });
  const chat = await call('/v1/widget/chat', {
    message: 'Where is my order?',
    ...(opts.user ? { user_token: opts.user } : {}),
  });
  expect(chat.status).toBe(200);
  if (opts.contact) expect((await call('/v1/widget/contact', opts.contact)).status).toBe(200);
  return { ...visitor, call };
}

describe("the inbox's visitor panel", () => {
  it('says who the visitor is and finds their other conversations by their id or their contact', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const first = await visit(bot, {
      user: 'u-42',
      contact: { name: 'Ana Visitor', contact: 'ana@example.com', note: 'After 5 pm' },
    });
    expect((await first.call('/v1/widget/handoff', {})).status).toBe(200);
    await http(`/v1/api/operator/threads/${first.session_id}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hi' },
    });
    await http(`/v1/api/operator/threads/${first.session_id}/resolve`, { key: bot.keys.secret_key, method: 'POST' });
    expect((await first.call('/v1/widget/satisfaction', { score: 5, comment: 'Great' })).status).toBe(200);
    const sameUser = await visit(bot, { user: 'u-42' });
    const sameContact = await visit(bot, { contact: { contact: 'ANA@example.com' } });
    const stranger = await visit(bot, { user: 'u-7', contact: { contact: 'bo@example.com' } });

    const panel = async (sid: string) => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${sid}/visitor`, { headers: owner });
      expect(res.status).toBe(200);
      return res.body;
    };
    const ana = await panel(first.session_id);
    expect(ana).toMatchObject({
      user: 'u-42',
      name: 'Ana Visitor',
      contact: 'ana@example.com',
      note: 'After 5 pm',
      satisfaction: { score: 5, comment: 'Great' },
    });
    expect(ana.first_seen_at).toBeGreaterThan(Date.now() - 60_000);
    const earlier = ana.earlier.map((c: { session_id: string }) => c.session_id);
    expect(new Set(earlier)).toEqual(new Set([sameUser.session_id, sameContact.session_id]));
    // All typed, nothing signed by the site: each link says how it was made, none is confirmed.
    expect(ana.user_confirmed).toBe(false);
    expect(
      Object.fromEntries(
        ana.earlier.map((c: { session_id: string; linked_by: string; confirmed: boolean }) => [
          c.session_id,
          [c.linked_by, c.confirmed],
        ]),
      ),
    ).toEqual({ [sameUser.session_id]: ['user', false], [sameContact.session_id]: ['contact', false] });
    expect(ana.earlier[0].last_message).toMatchObject({ author: 'bot' });

    // Known only by the site's id: the conversation with that id, not the one known only by the contact.
    const byUser = await panel(sameUser.session_id);
    expect(byUser).toMatchObject({ user: 'u-42', name: null, contact: null, satisfaction: null });
    expect(byUser.earlier.map((c: { session_id: string }) => c.session_id)).toEqual([first.session_id]);
    expect((await panel(stranger.session_id)).earlier).toEqual([]);

    // The list names the visitor by the contact they left.
    const list = await http(`/v1/dashboard/inbox?status=all&bot_id=${bot.bot_id}`, { headers: owner });
    const named = Object.fromEntries(
      list.body.threads.map((t: { session_id: string; visitor_name: string | null }) => [t.session_id, t.visitor_name]),
    );
    expect(named[first.session_id]).toBe('Ana Visitor');
    expect(named[sameContact.session_id]).toBe('ANA@example.com');
    expect(named[sameUser.session_id]).toBeNull();

    // Another workspace sees nothing of it.
    const other = await ownerSession(await newBot());
    const res = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${first.session_id}/visitor`, { headers: other });
    expect(res.status).toBe(404);
  });

  it('links another conversation as the same person only when the site confirmed the same user in both; a typed id is marked as a claim', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const signed = (user: string, secret = bot.keys.visitor_identity_secret) =>
      signVisitorConfirmation({ user, bot: bot.bot_id, exp }, secret);
    const chat = async (body: Record<string, unknown>) => {
      const res = await http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { message: 'Where is my order 1234?', ...body },
      });
      expect(res.status).toBe(200);
      return res.body.session_id as string;
    };
    const panel = async (sid: string) => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${sid}/visitor`, { headers: owner });
      expect(res.status).toBe(200);
      return res.body as {
        user: string | null;
        user_confirmed: boolean;
        earlier: { session_id: string; linked_by: string; confirmed: boolean }[];
      };
    };
    const links = (p: Awaited<ReturnType<typeof panel>>) =>
      p.earlier.map((c) => [c.session_id, c.linked_by, c.confirmed]);

    // Ana, confirmed by the site twice (once asking for a person: the hand-over's write path); then two visitors who
    // only say they are u-42 — one typed it, one sent a confirmation the site did not sign.
    const ana = await chat({ user_auth: signed('u-42') });
    const anaAgain = await chat({ user_auth: signed('u-42'), user_token: 'u-42', escalate: true });
    const typed = await chat({ user_token: 'u-42' });
    const forged = await chat({ user_token: 'u-42', user_auth: signed('u-42', 'idsec_not_the_sites_secret') });

    const seenByAna = await panel(ana);
    expect(seenByAna).toMatchObject({ user: 'u-42', user_confirmed: true });
    // The confirmed conversation first (claims cannot push it out of the list), then the claims, newest first.
    expect(links(seenByAna)).toEqual([
      [anaAgain, 'user', true],
      [forged, 'user', false],
      [typed, 'user', false],
    ]);
    expect((await panel(anaAgain)).user_confirmed).toBe(true);

    // Whoever typed u-42 is not shown Ana's conversations as theirs: every link is a claim.
    const seenByTyped = await panel(typed);
    expect(seenByTyped).toMatchObject({ user: 'u-42', user_confirmed: false });
    expect(new Set(links(seenByTyped).map(String))).toEqual(
      new Set([`${ana},user,false`, `${anaAgain},user,false`, `${forged},user,false`]),
    );
    expect((await panel(forged)).user_confirmed).toBe(false);

    // Ana's session typing her id later stays confirmed for it; typing another id is that id, not confirmed.
    await chat({ session_id: ana, user_token: 'u-42' });
    expect((await panel(ana)).user_confirmed).toBe(true);
    await chat({ session_id: ana, user_token: 'u-7' });
    expect(await panel(ana)).toMatchObject({ user: 'u-7', user_confirmed: false, earlier: [] });
  });

  it('names the person who replied from the dashboard to the widget (first name only), and nobody through the API', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana María Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const owner = await ownerSession(bot);
    const visitor = await visit(bot);
    expect((await visitor.call('/v1/widget/handoff', {})).status).toBe(200);
    const fromDashboard = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}/reply`, {
      headers: owner,
      body: { text: 'Hello from the dashboard' },
    });
    expect(fromDashboard.status).toBe(200);
    const fromApi = await http(`/v1/api/operator/threads/${visitor.session_id}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hello from the API' },
    });
    expect(fromApi.status).toBe(200);
    const poll = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, {
      token: visitor.visitor_token,
    });
    const operator = poll.body.messages.filter((m: { author: string }) => m.author === 'operator');
    expect(operator.map((m: { text: string; author_name?: string }) => [m.text, m.author_name])).toEqual([
      ['Hello from the dashboard', 'Ana'],
      ['Hello from the API', undefined],
    ]);
    // The public API's poll is the contract's: no author names.
    const api = await http(`/v1/api/messages?session_id=${visitor.session_id}`, { key: bot.keys.secret_key });
    expect(api.body.messages.some((m: { author_name?: string }) => 'author_name' in m)).toBe(false);
    // The inbox's transcript names the writer as the visitor saw it; the operator API's transcript names nobody.
    const inbox = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`, { headers: owner });
    const named = inbox.body.messages.filter((m: { author: string }) => m.author === 'operator');
    expect(named.map((m: { author_name?: string }) => m.author_name)).toEqual(['Ana', undefined]);
    const viaApi = await http(`/v1/api/operator/threads/${visitor.session_id}`, { key: bot.keys.secret_key });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body.messages.some((m: { author_name?: string }) => 'author_name' in m)).toBe(false);
  });

  it('stores a dashboard reply sent again with the same Idempotency-Key once (its answer was lost); the key with edited text is a new reply', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const visitor = await visit(bot);
    expect((await visitor.call('/v1/widget/handoff', {})).status).toBe(200);
    const reply = (text: string, key: string) =>
      http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}/reply`, {
        headers: { ...owner, 'Idempotency-Key': key },
        body: { text },
      });
    const first = await reply('On its way today', 'draft-1');
    const again = await reply('On its way today', 'draft-1');
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body.id).toBe(first.body.id);
    const edited = await reply('On its way tomorrow', 'draft-1');
    expect(edited.body.id).not.toBe(first.body.id);
    const inbox = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`, { headers: owner });
    const replies = inbox.body.messages.filter((m: { author: string }) => m.author === 'operator');
    expect(replies.map((m: { text: string }) => m.text)).toEqual(['On its way today', 'On its way tomorrow']);
    const tooLong = await reply('x', 'k'.repeat(256));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe('bad_request');
  });

  it('keeps internal notes of the team in the transcript, signed, never shown to the visitor', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const owner = await ownerSession(bot);
    const visitor = await visit(bot);
    const note = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}/notes`, {
      headers: owner,
      body: { text: '  Regular customer — offer free shipping  ' },
    });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({
      author: 'event',
      event: { kind: 'note', text: 'Regular customer — offer free shipping', by: 'Ana Owner' },
    });
    const transcript = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`, { headers: owner });
    expect(transcript.body.messages.find((m: { id: string }) => m.id === note.body.id)).toMatchObject({
      author: 'event',
      text: 'Ana Owner noted: Regular customer — offer free shipping',
    });
    // The visitor's side never has it, and nothing changed for them.
    const poll = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, {
      token: visitor.visitor_token,
    });
    expect(poll.body.messages.map((m: { text: string }) => m.text).join(' ')).not.toContain('free shipping');
    expect(poll.body.status).toBe('bot');
    for (const body of [{ text: '   ' }, {}, { text: 'x'.repeat(8001) }]) {
      const bad = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}/notes`, {
        headers: owner,
        body,
      });
      expect([bad.status, bad.body.code]).toEqual([400, 'bad_request']);
    }
  });
});
