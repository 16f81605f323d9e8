/**
 * An operator sends the visitor an image from the inbox: stored like a visitor's (checked from its bytes), an operator
 * message signed with the person's first name in the widget's poll, the transcript, the public poll (unsigned), and
 * the conversation taken by the sender.
 */
import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession, testDb } from '../support/helpers';
import { pixels } from '../support/images';
import { PNG_1X1, widgetCall, widgetSession } from '../support/widget';

describe('images from the operator', () => {
  it('reach the visitor as a signed operator message, in the transcript and both polls, and take the conversation', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const owner = await ownerSession(bot);
    const visitor = await widgetSession(bot);
    const token = visitor.visitor_token;
    const handoff = await widgetCall(bot, '/v1/widget/handoff', {
      method: 'POST',
      body: { session_id: visitor.session_id },
      token,
    });
    expect(handoff.status).toBe(200);
    const thread = `/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`;

    const sent = await http(`${thread}/attachments`, {
      headers: { ...owner, 'Content-Type': 'image/png' },
      rawBody: PNG_1X1,
    });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      status: 'operator',
      message: { author: 'operator', text: '', attachment: { content_type: 'image/png', width: 1, height: 1 } },
    });
    const { id, attachment } = sent.body.message;
    const file = await fetch(attachment.url);
    expect(file.status).toBe(200);
    // The picture sent, encoded again without its metadata (lib/media/image.ts).
    const served = Buffer.from(await file.arrayBuffer());
    expect(served.length).toBe(attachment.size);
    expect((await pixels(served)).equals(await pixels(PNG_1X1))).toBe(true);

    // The visitor's widget shows it, signed; the public poll has it unsigned; the transcript has it.
    const poll = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, { token });
    expect(poll.body.messages.find((m: { id: string }) => m.id === id)).toMatchObject({
      author: 'operator',
      author_name: 'Ana',
      attachment: { id: attachment.id },
    });
    const publicPoll = await http(`/v1/api/messages?session_id=${visitor.session_id}`, { key: bot.keys.secret_key });
    const unsigned = publicPoll.body.messages.find((m: { id: string }) => m.id === id);
    expect(unsigned).toMatchObject({ author: 'operator', attachment: { id: attachment.id } });
    expect(unsigned.author_name).toBeUndefined();
    const transcript = await http(thread, { headers: owner });
    expect(transcript.body.messages.find((m: { id: string }) => m.id === id)).toMatchObject({
      author: 'operator',
      attachment: { id: attachment.id },
    });
    expect(transcript.body.status).toBe('operator');
    expect(transcript.body.assignee).toMatchObject({ name: 'Ana Owner' });
  });

  it('stores an image sent again with the same Idempotency-Key once (its answer was lost); another image is another reply', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const visitor = await widgetSession(bot);
    const token = visitor.visitor_token;
    await widgetCall(bot, '/v1/widget/handoff', { method: 'POST', body: { session_id: visitor.session_id }, token });
    const thread = `/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`;
    const send = (bytes: Buffer, key: string) =>
      http(`${thread}/attachments`, {
        headers: { ...owner, 'Content-Type': 'image/png', 'Idempotency-Key': key },
        rawBody: bytes,
      });
    const first = await send(PNG_1X1, 'image-1');
    const again = await send(PNG_1X1, 'image-1');
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);
    // Another image under the same key (the operator picked another file): a new reply.
    const other = Buffer.concat([PNG_1X1, Buffer.alloc(1)]);
    const second = await send(other, 'image-1');
    expect(second.status).toBe(201);
    expect(second.body.message.id).not.toBe(first.body.message.id);
    const transcript = await http(thread, { headers: owner });
    const images = transcript.body.messages.filter((m: { attachment?: unknown }) => m.attachment);
    expect(images.map((m: { id: string }) => m.id)).toEqual([first.body.message.id, second.body.message.id]);
    const stored = await testDb().query(`SELECT count(*)::int AS n FROM media WHERE session_id = $1`, [
      visitor.session_id,
    ]);
    expect(stored.rows[0].n).toBe(2);
  });

  it('refuses what is not an image, and another workspace', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const visitor = await widgetSession(bot);
    const thread = `/v1/dashboard/bots/${bot.bot_id}/threads/${visitor.session_id}`;
    await widgetCall(bot, '/v1/widget/chat', {
      method: 'POST',
      body: { session_id: visitor.session_id, message: 'Hello' },
      token: visitor.visitor_token,
    });

    const text = await http(`${thread}/attachments`, {
      headers: { ...owner, 'Content-Type': 'image/png' },
      rawBody: Buffer.from('not a picture at all'),
    });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('unsupported_media_type');
    const empty = await http(`${thread}/attachments`, {
      headers: { ...owner, 'Content-Type': 'image/png' },
      rawBody: '',
    });
    expect([400, 415]).toContain(empty.status);
    const other = await ownerSession(await newBot());
    const foreign = await http(`${thread}/attachments`, {
      headers: { ...other, 'Content-Type': 'image/png' },
      rawBody: PNG_1X1,
    });
    expect(foreign.status).toBe(404);
    const stored = await testDb().query(
      `SELECT count(*)::int AS n FROM messages WHERE session_id = $1 AND author = 'operator'`,
      [visitor.session_id],
    );
    expect(stored.rows[0].n).toBe(0);
  });
});
