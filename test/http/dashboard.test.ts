import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScheduleNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { signVisitorConfirmation } from '../../lib/identity';
import { fingerprint } from '../../lib/keys';
import { triggerScheduleId } from '../../workflows/contracts/trigger-health';
import { type FakeSite, startFakeSite } from '../support/fake-site';
import { http, newBot, ownerSession, testDb, waitUntil, useTemporalClient } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';
import { startWebhookReceiver, verifyDelivery } from '../support/webhook-receiver';
import { PNG_1X1, widgetCall, widgetSession } from '../support/widget';

/**
 * The dashboard's own API (issue 13): bots with their keys shown once and reissued (the old one refused at once),
 * knowledge and scans for signed-in people, deleting a bot with everything outside Postgres, the operator inbox across
 * a workspace's bots, notifications, and the builder's panel.
 */
const temporal = useTemporalClient();

describe('bots and their keys', () => {
  it('creates a bot with its keys shown once; afterwards only fingerprints', async () => {
    const owner = await newBot({ botName: 'First' });
    const cookie = await ownerSession(owner);
    const created = await http('/v1/dashboard/bots', {
      body: { name: 'Support', instructions: 'Be brief.' },
      headers: cookie,
    });
    expect(created.status).toBe(201);
    const { bot, keys } = created.body;
    expect(keys).toEqual({
      secret_key: expect.stringMatching(/^sk_/),
      public_key: expect.stringMatching(/^pk_/),
      builder_key: expect.stringMatching(/^ck_/),
      handoff_webhook_secret: expect.stringMatching(/^whsec_/),
      visitor_identity_secret: expect.stringMatching(/^idsec_/),
    });
    expect(bot).toMatchObject({
      name: 'Support',
      instructions: 'Be brief.',
      public_key: keys.public_key,
      secret_key_fingerprint: fingerprint(keys.secret_key),
      builder_key_fingerprint: fingerprint(keys.builder_key),
      handoff_webhook_secret_fingerprint: fingerprint(keys.handoff_webhook_secret),
      visitor_identity_secret_fingerprint: fingerprint(keys.visitor_identity_secret),
      allowed_origins: [],
      created_at: expect.any(Number),
    });
    // The new key works at once; reading the bot again shows no secret in full.
    expect((await http('/v1/api/messages?session_id=s1', { key: keys.secret_key })).status).toBe(200);
    const read = await http(`/v1/dashboard/bots/${bot.id}`, { headers: cookie });
    for (const secret of [
      keys.secret_key,
      keys.builder_key,
      keys.handoff_webhook_secret,
      keys.visitor_identity_secret,
    ]) {
      expect(read.text).not.toContain(secret);
    }
    await http('/v1/api/knowledge', { key: keys.secret_key, body: { text: 'Opening hours: nine to five.' } });
    const list = await http('/v1/dashboard/bots', { headers: cookie });
    expect(list.body.bots.map((b: { name: string }) => b.name)).toEqual(['First', 'Support']);
    expect(list.body.bots[1]).toMatchObject({ id: bot.id, knowledge_sources: 1, open_requests: 0 });

    const blank = await http('/v1/dashboard/bots', { body: { name: ' ' }, headers: cookie });
    expect(blank.status).toBe(400);
  });

  it('reissues each key: the previous one is refused at once, the new one works', async () => {
    const receiver = await startWebhookReceiver([200]);
    try {
      const bot = await newBot();
      const cookie = await ownerSession(bot);
      const reissue = (what: string) =>
        http(`/v1/dashboard/bots/${bot.bot_id}/${what}`, { method: 'POST', headers: cookie });

      // Secret key.
      const secret = await reissue('secret');
      expect(secret.body).toEqual({ key: expect.stringMatching(/^sk_/), fingerprint: fingerprint(secret.body.key) });
      const old = await http('/v1/api/messages?session_id=s1', { key: bot.keys.secret_key });
      expect([old.status, old.body.code]).toEqual([401, 'invalid_key']);
      expect((await http('/v1/api/messages?session_id=s1', { key: secret.body.key })).status).toBe(200);
      expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: cookie })).body.secret_key_fingerprint).toBe(
        secret.body.fingerprint,
      );

      // Builder key: every earlier builder key of the workspace stops (contract, rule 5).
      const builder = await reissue('builder-key');
      expect(builder.body.key).toMatch(/^ck_/);
      const mcp = (key: string) => http('/v1/dashboard/builder', { body: { message: 'hello' }, key });
      expect((await mcp(bot.keys.builder_key)).status).toBe(401);
      expect((await mcp(builder.body.key)).status).toBe(200);

      // Webhook secret: deliveries are signed with the new one.
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
      const webhook = await reissue('webhook-secret');
      expect(webhook.body.key).toMatch(/^whsec_/);
      const session = randomUUID();
      await http('/v1/api/handoff', { key: secret.body.key, body: { session_id: session } });
      const delivery = await waitUntil('the escalated delivery', async () =>
        receiver.received.find((d) => d.body.session_id === session),
      );
      expect(verifyDelivery(delivery, webhook.body.key)).toBe(true);
      expect(verifyDelivery(delivery, bot.keys.handoff_webhook_secret)).toBe(false);

      // Identity secret: a confirmation signed with the old one no longer confirms anyone.
      const identity = await reissue('identity-secret');
      const confirm = (secretKey: string, user: string) =>
        signVisitorConfirmation(
          { user, role: 'visitor', bot: bot.bot_id, exp: Math.floor(Date.now() / 1000) + 600 },
          secretKey,
        );
      const oldSid = randomUUID();
      await http('/v1/api/chat', {
        key: secret.body.key,
        body: { session_id: oldSid, message: 'hi', user_auth: confirm(bot.keys.visitor_identity_secret, 'old-user') },
      });
      const newSid = randomUUID();
      await http('/v1/api/chat', {
        key: secret.body.key,
        body: { session_id: newSid, message: 'hi', user_auth: confirm(identity.body.key, 'new-user') },
      });
      const userOf = async (sid: string) =>
        (await http(`/v1/api/operator/threads/${sid}`, { key: secret.body.key })).body.visitor_user;
      expect(await userOf(oldSid)).toBeNull();
      expect(await userOf(newSid)).toBe('new-user');

      // Admins may reissue; operators may not (the words: an operator does not rotate keys).
      const admin = await sessionOf(await addMember(bot, 'admin'));
      const operator = await sessionOf(await addMember(bot, 'operator'));
      expect((await http(`/v1/dashboard/bots/${bot.bot_id}/secret`, { method: 'POST', headers: admin })).status).toBe(
        200,
      );
      expect(
        (await http(`/v1/dashboard/bots/${bot.bot_id}/secret`, { method: 'POST', headers: operator })).status,
      ).toBe(403);
    } finally {
      await receiver.close();
    }
  });

  it('deleting a bot stops its keys, removes its Schedules and files, and leaves other bots alone', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const other = await http('/v1/dashboard/bots', { body: { name: 'Stays' }, headers: cookie });
    const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
      body: { kind: 'schedule', name: 'Nightly', task: 'Digest', schedule: { every_seconds: 3600 } },
      headers: cookie,
    });
    expect(trigger.status).toBe(201);
    await temporal.schedule.getHandle(triggerScheduleId(trigger.body.id)).describe();
    const visitor = await widgetSession(bot);
    const image = await widgetCall(bot, `/v1/widget/attachments?session_id=${visitor.session_id}`, {
      rawBody: PNG_1X1,
      token: visitor.visitor_token,
    });
    expect(image.status).toBe(201);

    const deleted = await http(`/v1/dashboard/bots/${bot.bot_id}`, { method: 'DELETE', headers: cookie });
    expect(deleted.body).toEqual({ status: 'deleted' });
    expect((await http('/v1/api/messages?session_id=x', { key: bot.keys.secret_key })).status).toBe(401);
    expect((await http(`/v1/widget/config?key=${bot.keys.public_key}`)).status).toBe(401);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: cookie })).status).toBe(404);
    await expect(temporal.schedule.getHandle(triggerScheduleId(trigger.body.id)).describe()).rejects.toBeInstanceOf(
      ScheduleNotFoundError,
    );
    expect((await http(`/media/${image.body.message.attachment.id}`)).status).toBe(404);
    const left = await http('/v1/dashboard/bots', { headers: cookie });
    expect(left.body.bots.map((b: { id: string }) => b.id)).toEqual([other.body.bot.id]);
    expect((await http('/v1/api/messages?session_id=x', { key: other.body.keys.secret_key })).status).toBe(200);
  });
});

describe('knowledge and scans for signed-in people', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(() => site?.close());

  it('writes, lists, reads and deletes sources; operators read only', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const base = `/v1/dashboard/bots/${bot.bot_id}/knowledge`;
    const written = await http(base, { body: { title: 'Hours', text: 'We open at nine.' }, headers: cookie });
    expect(written.status).toBe(202);
    expect(written.body).toEqual({ status: 'indexed', source_id: expect.any(String) });
    const id = written.body.source_id;
    const list = await http(base, { headers: cookie });
    expect(list.body.sources).toEqual([expect.objectContaining({ source_id: id, title: 'Hours', origin: 'api' })]);
    expect((await http(`${base}/${id}`, { headers: cookie })).body.text).toBe('We open at nine.');
    // The same knowledge the API sees.
    expect((await http(`/v1/api/knowledge/${id}`, { key: bot.keys.secret_key })).status).toBe(200);

    const operator = await sessionOf(await addMember(bot));
    expect((await http(base, { headers: operator })).status).toBe(200);
    expect((await http(`${base}/${id}`, { method: 'DELETE', headers: operator })).status).toBe(403);
    expect((await http(`${base}/${id}`, { method: 'DELETE', headers: cookie })).body).toEqual({
      status: 'deleted',
      source_id: id,
    });
    expect((await http(`${base}/${id}`, { headers: cookie })).status).toBe(404);
  });

  it('starts a scan whose progress the scan list shows; a second one meanwhile is 409', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const scans = `/v1/dashboard/bots/${bot.bot_id}/scans`;
    const started = await http(scans, { body: { url: site.url, max_pages: 5, refresh_days: 0 }, headers: cookie });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'scanning', url: site.url });
    const again = await http(scans, { body: { url: site.url }, headers: cookie });
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
    const done = await waitUntil(
      'the scan to finish',
      async () => {
        const list = await http(scans, { headers: cookie });
        const scan = list.body.scans[0];
        return scan?.status === 'done' ? scan : undefined;
      },
      60_000,
    );
    expect(done.pages_indexed).toBeGreaterThan(0);
    const sources = await http(`/v1/dashboard/bots/${bot.bot_id}/knowledge`, { headers: cookie });
    expect(sources.body.sources.some((s: { origin: string }) => s.origin === 'scan')).toBe(true);
  });
});

describe('the operator inbox', () => {
  it('lists requests across the workspace’s bots, shows transcripts with events, replies, types and resolves', async () => {
    const bot = await newBot({ botName: 'Shop' });
    const cookie = await ownerSession(bot);
    const second = (await http('/v1/dashboard/bots', { body: { name: 'Billing desk' }, headers: cookie })).body;

    // Bot Shop: a visitor chats (bot answers), rates the answer, asks for a person, sends an image.
    const visitor = await widgetSession(bot);
    const token = visitor.visitor_token;
    const answer = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: visitor.session_id, message: 'Where is my parcel?' },
      token,
    });
    await widgetCall(bot, '/v1/widget/rating', {
      body: { session_id: visitor.session_id, ref: answer.body.message_id, rating: 'down' },
      token,
    });
    await widgetCall(bot, '/v1/widget/handoff', { body: { session_id: visitor.session_id }, token });
    await widgetCall(bot, `/v1/widget/attachments?session_id=${visitor.session_id}`, { rawBody: PNG_1X1, token });
    // Bot Billing desk: a conversation the bot answers, not handed over.
    const quiet = randomUUID();
    await http('/v1/api/chat', { key: second.keys.secret_key, body: { session_id: quiet, message: 'Invoice?' } });

    const operator = await sessionOf(await addMember(bot, 'operator'));
    const open = await http('/v1/dashboard/inbox', { headers: operator });
    expect(open.body.threads).toEqual([
      expect.objectContaining({
        bot_id: bot.bot_id,
        bot_name: 'Shop',
        session_id: visitor.session_id,
        status: 'waiting',
        escalated_at: expect.any(Number),
        // An image is its attachment, not a marker in the text.
        last_message: {
          author: 'visitor',
          text: '',
          at: expect.any(Number),
          attachment: expect.objectContaining({ content_type: 'image/png', url: expect.stringContaining('/media/') }),
        },
      }),
    ]);
    const all = await http('/v1/dashboard/inbox?status=all', { headers: operator });
    expect(all.body.threads.map((t: { session_id: string }) => t.session_id)).toEqual([quiet, visitor.session_id]);
    const onlySecond = await http(`/v1/dashboard/inbox?status=all&bot_id=${second.bot.id}`, { headers: operator });
    expect(onlySecond.body.threads.map((t: { session_id: string }) => t.session_id)).toEqual([quiet]);
    // One at a time, with the cursor.
    const page1 = await http('/v1/dashboard/inbox?status=all&limit=1', { headers: operator });
    expect(page1.body.threads).toHaveLength(1);
    const page2 = await http(`/v1/dashboard/inbox?status=all&limit=1&cursor=${page1.body.next_cursor}`, {
      headers: operator,
    });
    expect(page2.body.threads.map((t: { session_id: string }) => t.session_id)).toEqual([visitor.session_id]);
    expect(page2.body.next_cursor).toBe('');

    const thread = `/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`;
    const transcript = await http(thread, { headers: operator });
    expect(transcript.body.messages.map((m: { author: string }) => m.author)).toEqual([
      'visitor',
      'bot',
      'event',
      'visitor',
    ]);
    expect(transcript.body.messages[2].event).toEqual({ kind: 'rating', rating: 'down', ref: answer.body.message_id });
    expect(transcript.body.messages[3].attachment.url).toMatch(/\/media\/med_/);
    // Opening it told the visitor someone reads; the operator types, then replies.
    await http(`${thread}/typing`, { method: 'POST', headers: operator });
    const seen = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, { token });
    expect(seen.body).toMatchObject({ operator_here: true, operator_typing: true });
    const reply = await http(`${thread}/reply`, { body: { text: 'It left this morning.' }, headers: operator });
    expect(reply.body).toMatchObject({ status: 'operator' });
    const after = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, { token });
    expect(after.body.messages.at(-1)).toMatchObject({ author: 'operator', text: 'It left this morning.' });
    // A bot of another bot's path is not this conversation.
    expect(
      (await http(`/v1/dashboard/bots/${second.bot.id}/threads/${visitor.session_id}`, { headers: operator })).status,
    ).toBe(404);

    const resolved = await http(`${thread}/resolve`, { method: 'POST', headers: operator });
    expect(resolved.body).toEqual({ status: 'bot', resolved: true });
    expect((await http('/v1/dashboard/inbox', { headers: operator })).body.threads).toEqual([]);

    // Another workspace sees none of it.
    const stranger = await ownerSession(await newBot());
    expect((await http('/v1/dashboard/inbox?status=all', { headers: stranger })).body.threads).toEqual([]);
    expect((await http(thread, { headers: stranger })).status).toBe(404);
  });
});

describe('notifications', () => {
  it('counts unread ones and marks them read, one or all', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    for (const name of ['Ana', 'Ben']) {
      const s = await widgetSession(bot);
      await widgetCall(bot, '/v1/widget/contact', {
        body: { session_id: s.session_id, name, contact: `${name.toLowerCase()}@example.com` },
        token: s.visitor_token,
      });
    }
    const list = await http('/v1/dashboard/notifications', { headers: cookie });
    expect(list.body.unread).toBe(2);
    expect(list.body.notifications.map((n: { read_at: number | null }) => n.read_at)).toEqual([null, null]);
    const first = list.body.notifications[0].id;
    await http('/v1/dashboard/notifications/read', { body: { ids: [first] }, headers: cookie });
    const after = await http('/v1/dashboard/notifications', { headers: cookie });
    expect(after.body.unread).toBe(1);
    expect(after.body.notifications[0].read_at).toEqual(expect.any(Number));
    await http('/v1/dashboard/notifications/read', { body: {}, headers: cookie });
    expect((await http('/v1/dashboard/notifications', { headers: cookie })).body.unread).toBe(0);
  });
});

describe("the dashboard's builder panel", () => {
  it('talks to the builder in its own conversation, as the signed-in person', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const res = await http('/v1/dashboard/assistant', { body: { message: 'What can you do?' }, headers: cookie });
    expect(res.status).toBe(200);
    expect(res.body.reply).toEqual(expect.any(String));
    expect(res.body.reply.length).toBeGreaterThan(0);
    const wf = await temporal.workflow
      .getHandle(`builder/${bot.workspace_id}/user:${bot.user_id}/dashboard`)
      .describe();
    expect(wf.status.name).toBe('RUNNING');
    const empty = await http('/v1/dashboard/assistant', { body: { message: '' }, headers: cookie });
    expect(empty.status).toBe(400);
  });
});
