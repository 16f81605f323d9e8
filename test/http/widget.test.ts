import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { signVisitorConfirmation } from '../../lib/identity';
import { ESCALATION_CONFIRMATION } from '../../workflows/conversation';
import { http, inOneRateWindow, newBot, ownerSession, sseFrames, testDb, waitUntil } from '../support/helpers';
import { pixels } from '../support/images';
import { stackInfo } from '../support/stack-info';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { PNG_1X1, allowOrigins, browserRequest, widgetCall, widgetSession } from '../support/widget';

/**
 * `/v1/widget/*` (docs/widget.md): the visitor's browser on the public key — CORS for the bot's allowed origins, key
 * confusion, a session only its own browser can read, the conversation through the same service as `/v1/api/*`, events
 * that reach operators and never visitors, attachments and `/media/{id}`.
 */
const SHOP = 'https://shop.example.com';

const transcript = async (bot: { keys: { secret_key: string } }, sid: string) =>
  (await http(`/v1/api/operator/threads/${sid}`, { key: bot.keys.secret_key })).body;

describe('widget: keys, origins and CORS', () => {
  it('answers a preflight only for the bot’s allowed origins', async () => {
    const bot = await newBot({ botName: 'Shop helper' });
    await allowOrigins(bot, [`${SHOP}/`, 'http://LOCALHOST:3000']);
    const path = `/v1/widget/chat?key=${bot.keys.public_key}`;
    const preflight = (origin: string, p = path) =>
      browserRequest(p, {
        method: 'OPTIONS',
        origin,
        headers: {
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-visitor-token',
        },
      });

    const allowed = await preflight(SHOP);
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(allowed.headers['access-control-allow-headers'])).toMatch(/X-Visitor-Token/);
    expect(String(allowed.headers['access-control-allow-methods'])).toMatch(/POST/);
    // Stored normalized, as browsers send them.
    expect((await preflight('http://localhost:3000')).headers['access-control-allow-origin']).toBe(
      'http://localhost:3000',
    );

    const other = await preflight('https://evil.example');
    expect(other.status).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const unknownKey = await preflight(SHOP, '/v1/widget/chat?key=pk_unknown');
    expect(unknownKey.headers['access-control-allow-origin']).toBeUndefined();

    // No origin is allowed by default.
    const fresh = await newBot();
    const none = await preflight(SHOP, `/v1/widget/config?key=${fresh.keys.public_key}`);
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses calls from other origins before doing anything, and lets allowed pages read answers and errors', async () => {
    const bot = await newBot({ botName: 'Shop helper' });
    await allowOrigins(bot, [SHOP]);
    const key = bot.keys.public_key;

    const ok = await browserRequest(`/v1/widget/config?key=${key}`, { origin: SHOP });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ bot: { name: 'Shop helper' }, handoff_enabled: true, poll_interval_ms: 2500 });
    expect(ok.body.attachments).toEqual({ max_bytes: 5 * 1024 * 1024, types: expect.arrayContaining(['image/png']) });
    expect(ok.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(ok.headers['access-control-expose-headers'])).toMatch(/X-Request-Id/);
    expect(String(ok.headers.vary)).toMatch(/Origin/);

    const refused = await browserRequest(`/v1/widget/session?key=${key}`, { method: 'POST', origin: SHOP + ':8443' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('origin_not_allowed');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();

    // An error of an allowed page is readable by it (CORS headers on errors too).
    const bad = await browserRequest(`/v1/widget/rating?key=${key}`, { origin: SHOP, body: { session_id: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.headers['access-control-allow-origin']).toBe(SHOP);

    // Callers that are not browsers send no Origin: the public key is public anyway.
    expect((await widgetCall(bot, '/v1/widget/config')).status).toBe(200);
  });

  it('takes only the public key: sk_ and ck_ are 403 wrong_key_type, and pk_ is refused on /v1/api/*', async () => {
    const bot = await newBot();
    const missing = await http('/v1/widget/config');
    expect([missing.status, missing.body.code]).toEqual([401, 'missing_key']);
    const unknown = await http('/v1/widget/config?key=pk_nothing');
    expect([unknown.status, unknown.body.code]).toEqual([401, 'invalid_key']);
    for (const key of [bot.keys.secret_key, bot.keys.builder_key]) {
      const viaQuery = await http(`/v1/widget/config?key=${key}`);
      expect([viaQuery.status, viaQuery.body.code]).toEqual([403, 'wrong_key_type']);
      const viaHeader = await http('/v1/widget/session', { method: 'POST', key });
      expect([viaHeader.status, viaHeader.body.code]).toEqual([403, 'wrong_key_type']);
    }
    // The header works as well as the query parameter.
    expect((await http('/v1/widget/config', { key: bot.keys.public_key })).status).toBe(200);

    for (const [path, body] of [
      ['/v1/api/chat', { message: 'hi' }],
      ['/v1/api/messages?session_id=abc', undefined],
      ['/v1/api/operator/threads', undefined],
    ] as const) {
      const res = await http(path, { key: bot.keys.public_key, body });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'wrong_key_type']);
    }
    // No CORS on /v1/api/*, even for an origin the bot allows (contract, Authentication rule 4).
    await allowOrigins(bot, [SHOP]);
    const api = await browserRequest('/v1/api/messages?session_id=abc', {
      origin: SHOP,
      headers: { 'X-Bot-Key': bot.keys.secret_key },
    });
    expect(api.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('validates allowed origins: scheme://host[:port] only, normalized, deduplicated', async () => {
    const bot = await newBot();
    const cookie = await ownerSession(bot);
    const patch = (allowed_origins: unknown) =>
      http(`/v1/dashboard/bots/${bot.bot_id}`, { method: 'PATCH', body: { allowed_origins }, headers: cookie });
    for (const bad of [
      'shop.example.com',
      'https://shop.example.com/page',
      'ftp://x.example',
      'https://u:p@x.example',
    ]) {
      const res = await patch([bad]);
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, 'bad_request']);
    }
    const res = await patch(['HTTPS://Shop.Example.com:443', 'https://shop.example.com', 'http://127.0.0.1:8080']);
    expect(res.status).toBe(200);
    expect(res.body.allowed_origins).toEqual(['https://shop.example.com', 'http://127.0.0.1:8080']);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: cookie })).body.allowed_origins).toEqual([
      'https://shop.example.com',
      'http://127.0.0.1:8080',
    ]);
  });
});

describe('widget: the visitor’s conversation', () => {
  it('a session belongs to its browser: without its token it reads as missing', async () => {
    const bot = await newBot();
    const mine = await widgetSession(bot);
    const theirs = await widgetSession(bot);
    expect(mine.session_id).not.toBe(theirs.session_id);
    expect(mine.visitor_token).toMatch(/^vt_/);
    const said = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: mine.session_id, message: 'my secret order 42' },
      token: mine.visitor_token,
    });
    expect(said.status).toBe(200);

    const poll = (token?: string) => widgetCall(bot, `/v1/widget/messages?session_id=${mine.session_id}`, { token });
    for (const token of [undefined, theirs.visitor_token, `${mine.visitor_token}x`, 'vt_']) {
      const res = await poll(token);
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
    // The token of the same session id under another bot opens nothing either.
    const other = await newBot();
    const elsewhere = await widgetCall(other, `/v1/widget/messages?session_id=${mine.session_id}`, {
      token: mine.visitor_token,
    });
    expect(elsewhere.status).toBe(404);

    const own = await poll(mine.visitor_token);
    expect(own.status).toBe(200);
    expect(own.body.messages.map((m: { text: string }) => m.text)[0]).toBe('my secret order 42');
  });

  it('chats in JSON and as a stream with the message ids a rating needs', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const json = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'What are your hours?' },
      token: s.visitor_token,
    });
    expect(json.status).toBe(200);
    expect(json.body).toEqual({
      answer: 'Fake answer: What are your hours?',
      session_id: s.session_id,
      visitor_message_id: expect.stringMatching(/^msg_/),
      message_id: expect.stringMatching(/^msg_/),
    });

    const stream = await sseFrames(`/v1/widget/chat/stream?key=${bot.keys.public_key}`, {
      key: '',
      headers: { 'X-Visitor-Token': s.visitor_token },
      body: { session_id: s.session_id, message: 'And on Sunday?' },
    });
    expect(stream.status).toBe(200);
    const text = stream.frames
      .filter((f) => 'delta' in f)
      .map((f) => f.delta)
      .join('');
    expect(text).toBe('Fake answer: And on Sunday?');
    const end = stream.frames.at(-1)!;
    expect(end).toEqual({
      done: true,
      session_id: s.session_id,
      handoff: false,
      quota_exceeded: false,
      visitor_message_id: expect.stringMatching(/^msg_/),
      message_id: expect.stringMatching(/^msg_/),
    });

    const polled = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token: s.visitor_token });
    expect(polled.body.messages.map((m: { id: string; author: string }) => [m.author, m.id])).toEqual([
      ['visitor', json.body.visitor_message_id],
      ['bot', json.body.message_id],
      ['visitor', end.visitor_message_id],
      ['bot', end.message_id],
    ]);
  });

  it('accepts a visitor confirmation (user_auth) as /v1/api/chat does', async () => {
    const bot = await newBot();
    const secret = bot.keys.visitor_identity_secret;
    const s = await widgetSession(bot);
    const user_auth = signVisitorConfirmation(
      { user: 'customer-7', role: 'visitor', bot: bot.bot_id, exp: Math.floor(Date.now() / 1000) + 600 },
      secret,
    );
    const res = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'hello', user_auth, user_token: 'someone-else' },
      token: s.visitor_token,
    });
    expect(res.status).toBe(200);
    expect((await transcript(bot, s.session_id)).visitor_user).toBe('customer-7');
  });

  it('hands over, shows the operator typing and replying, and forwards the visitor’s typing', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const token = s.visitor_token;
    // Typing before the conversation exists is 404, as on /v1/api/typing.
    expect((await widgetCall(bot, '/v1/widget/typing', { body: { session_id: s.session_id }, token })).status).toBe(
      404,
    );
    const handoff = await widgetCall(bot, '/v1/widget/handoff', { body: { session_id: s.session_id }, token });
    expect([handoff.status, handoff.body]).toEqual([200, { status: 'waiting' }]);
    expect((await widgetCall(bot, '/v1/widget/typing', { body: { session_id: s.session_id }, token })).status).toBe(
      200,
    );
    const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
    expect(threads.body.threads[0]).toMatchObject({ session_id: s.session_id, visitor_typing: true });

    // An operator opens the conversation (operator_here), then types.
    await transcript(bot, s.session_id);
    await http(`/v1/api/operator/threads/${s.session_id}/typing`, { key: bot.keys.secret_key, method: 'POST' });
    const typing = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token });
    expect(typing.body).toMatchObject({ status: 'waiting', operator_typing: true, operator_here: true });
    await http(`/v1/api/operator/threads/${s.session_id}/reply`, {
      key: bot.keys.secret_key,
      body: { text: 'Hello!' },
    });
    const replied = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token });
    expect(replied.body.status).toBe('operator');
    expect(replied.body.messages.at(-1)).toMatchObject({ author: 'operator', text: 'Hello!' });

    const forwarded = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'Thanks' },
      token,
    });
    expect(forwarded.body).toEqual({
      answer: '',
      session_id: s.session_id,
      handoff: true,
      visitor_message_id: expect.any(String),
    });

    // Handoff disabled: 404 as on /v1/api/handoff.
    const off = await newBot();
    await testDb().query(`UPDATE bots SET handoff_enabled = false WHERE id = $1`, [off.bot_id]);
    const s2 = await widgetSession(off);
    const refused = await widgetCall(off, '/v1/widget/handoff', {
      body: { session_id: s2.session_id },
      token: s2.visitor_token,
    });
    expect([refused.status, refused.body.code]).toEqual([404, 'not_found']);
    expect((await widgetCall(off, '/v1/widget/config')).body.handoff_enabled).toBe(false);
  });

  it('a used-up monthly quota answers the placeholder as a notice, with nothing to rate', async () => {
    const bot = await newBot({ monthlyConversationQuota: 0 });
    const s = await widgetSession(bot);
    const res = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'hi' },
      token: s.visitor_token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ quota_exceeded: true, notice: 'outage' });
    expect(res.body.message_id).toBeUndefined();
    expect(res.body.visitor_message_id).toBeUndefined();
  });
});

describe('widget: events (ratings and contacts)', () => {
  it('a rating is an event in the operator transcript, never in the visitor’s polls; rating again replaces it', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const token = s.visitor_token;
    const answer = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'Q' },
      token,
    });
    const ref = answer.body.message_id as string;

    const rate = (rating: string, r = ref) =>
      widgetCall(bot, '/v1/widget/rating', { body: { session_id: s.session_id, ref: r, rating }, token });
    expect((await rate('up')).body).toEqual({ status: 'ok' });
    let events = (await transcript(bot, s.session_id)).messages.filter((m: { author: string }) => m.author === 'event');
    expect(events).toEqual([
      {
        id: expect.any(String),
        author: 'event',
        text: 'Rated an answer as helpful',
        at: expect.any(Number),
        event: { kind: 'rating', rating: 'up', ref },
      },
    ]);

    expect((await rate('down')).status).toBe(200);
    events = (await transcript(bot, s.session_id)).messages.filter((m: { author: string }) => m.author === 'event');
    expect(events).toHaveLength(1);
    expect(events[0].event).toEqual({ kind: 'rating', rating: 'down', ref });

    // Only the bot's answers of this conversation can be rated; only up or down.
    expect((await rate('up', answer.body.visitor_message_id)).status).toBe(404);
    expect((await rate('up', 'msg_nothing')).status).toBe(404);
    expect((await rate('meh')).status).toBe(400);

    // Never shown to the visitor: not in the widget's poll, not in /v1/api/messages.
    const widgetPoll = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token });
    const apiPoll = await http(`/v1/api/messages?session_id=${s.session_id}`, { key: bot.keys.secret_key });
    for (const poll of [widgetPoll, apiPoll]) {
      expect(poll.body.messages.map((m: { author: string }) => m.author)).toEqual(['visitor', 'bot']);
    }
  });

  it('a contact is an event and a notification, accepted before any message and over the quota', async () => {
    const bot = await newBot({ monthlyConversationQuota: 0 });
    const s = await widgetSession(bot);
    const token = s.visitor_token;
    const left = await widgetCall(bot, '/v1/widget/contact', {
      body: { session_id: s.session_id, name: ' Ana ', contact: 'ana@example.com', note: 'Call me after 5' },
      token,
    });
    expect(left.body).toEqual({ status: 'ok' });
    const t = await transcript(bot, s.session_id);
    expect(t.messages).toEqual([
      {
        id: expect.any(String),
        author: 'event',
        text: 'Left a contact: Ana, ana@example.com — Call me after 5',
        at: expect.any(Number),
        event: { kind: 'contact', name: 'Ana', contact: 'ana@example.com', note: 'Call me after 5' },
      },
    ]);
    const poll = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token });
    expect(poll.body.messages).toEqual([]);

    const notifications = await http('/v1/dashboard/notifications', { headers: await ownerSession(bot) });
    expect(notifications.body.notifications[0]).toMatchObject({
      kind: 'contact_left',
      bot_id: bot.bot_id,
      body: 'Ana, ana@example.com — Call me after 5',
      data: { session_id: s.session_id, contact: 'ana@example.com' },
    });

    for (const body of [{ session_id: s.session_id }, { session_id: s.session_id, contact: '   ' }]) {
      const res = await widgetCall(bot, '/v1/widget/contact', { body, token });
      expect([res.status, res.body.code]).toEqual([400, 'bad_request']);
    }
    const tooLong = await widgetCall(bot, '/v1/widget/contact', {
      body: { session_id: s.session_id, contact: 'x'.repeat(321) },
      token,
    });
    expect(tooLong.status).toBe(400);
  });
});

describe('widget: attachments and /media/{id}', () => {
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([200]);
  });
  afterAll(() => receiver.close());

  it('stores an image as a message the operator sees; the file is served with its type; erase deletes it', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
    const s = await widgetSession(bot);
    const token = s.visitor_token;
    await widgetCall(bot, '/v1/widget/handoff', { body: { session_id: s.session_id }, token });

    const up = await widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, {
      rawBody: PNG_1X1,
      // What the sender declares does not count: the bytes do.
      headers: { 'Content-Type': 'application/octet-stream' },
      token,
    });
    expect(up.status).toBe(201);
    const message = up.body.message;
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      author: 'visitor',
      text: '',
      at: expect.any(Number),
      attachment: {
        id: expect.stringMatching(/^med_[A-Za-z0-9]{32}$/),
        url: `${stackInfo().apiUrl}/media/${message.attachment.id}`,
        content_type: 'image/png',
        size: expect.any(Number),
        width: 1,
        height: 1,
      },
    });

    const file = await fetch(message.attachment.url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    // The picture sent, encoded again without its metadata (lib/media/image.ts): the same pixels.
    const served = Buffer.from(await file.arrayBuffer());
    expect(served.length).toBe(message.attachment.size);
    expect((await pixels(served)).equals(await pixels(PNG_1X1))).toBe(true);

    // The operator's transcript and the visitor's poll hold it; the person handling it got a visitor_message.
    const t = await transcript(bot, s.session_id);
    expect(t.messages.at(-1)).toEqual(message);
    const poll = await widgetCall(bot, `/v1/widget/messages?session_id=${s.session_id}`, { token });
    expect(poll.body.messages.at(-1)).toEqual(message);
    const delivery = await waitUntil('visitor_message webhook', async () =>
      receiver.received.find((d) => d.body.session_id === s.session_id && d.body.event === 'visitor_message'),
    );
    // An image is its attachment on the wire, not a marker in the text.
    expect(delivery.body.text).toBe('');
    expect(delivery.body.attachment).toEqual(message.attachment);
    // The escalated transcript names images rather than showing nothing.
    await widgetCall(bot, '/v1/widget/chat', { body: { session_id: s.session_id, message: 'see above' }, token });

    const erased = await http('/v1/api/visitors/erase', {
      key: bot.keys.secret_key,
      body: { session_id: s.session_id },
    });
    expect(erased.body).toEqual({ status: 'erased', conversations: 1 });
    const gone = await http(`/media/${message.attachment.id}`);
    expect([gone.status, gone.body.code]).toEqual([404, 'not_found']);
    const rows = await testDb().query(`SELECT 1 FROM media WHERE id = $1`, [message.attachment.id]);
    expect(rows.rowCount).toBe(0);
  });

  it('refuses what is not an image (by the bytes), and images over 5 MiB', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const upload = (rawBody: Buffer, type = 'image/png') =>
      widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, {
        rawBody,
        headers: { 'Content-Type': type },
        token: s.visitor_token,
      });
    for (const body of [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      Buffer.from('%PDF-1.7 not an image'),
      Buffer.alloc(0),
    ]) {
      const res = await upload(body);
      expect([res.status, res.body.code]).toEqual([415, 'unsupported_media_type']);
    }
    // A GIF's signature and nothing after it: an image whose size cannot be read.
    const cut = await upload(Buffer.from('GIF89a'));
    expect([cut.status, cut.body.code]).toEqual([400, 'bad_request']);
    const big = Buffer.concat([PNG_1X1, Buffer.alloc(5 * 1024 * 1024)]);
    const tooBig = await upload(big);
    expect([tooBig.status, tooBig.body.code]).toEqual([413, 'payload_too_large']);
    // Exactly at the limit is fine (the bytes still start as a PNG).
    const atLimit = await upload(Buffer.concat([PNG_1X1, Buffer.alloc(5 * 1024 * 1024 - PNG_1X1.length)]));
    expect(atLimit.status).toBe(201);
    const none = await testDb().query(`SELECT count(*)::int AS n FROM media WHERE session_id = $1`, [s.session_id]);
    expect(none.rows[0].n).toBe(1);
    // Without its visitor token, nothing is stored.
    const stranger = await widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, { rawBody: PNG_1X1 });
    expect(stranger.status).toBe(404);
  });

  it('answers 404 with the error body for an unknown file', async () => {
    for (const id of ['med_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'nothing', '..%2F..%2Fetc%2Fpasswd']) {
      const res = await http(`/media/${id}`);
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });
});

describe('widget: limits per public key and client address', () => {
  it('uploads: 10 a minute pass, the 11th is 429 with Retry-After', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    await inOneRateWindow();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 11; i++) {
      last = await widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, {
        rawBody: PNG_1X1,
        token: s.visitor_token,
      });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(201));
    expect(last!.status).toBe(429);
    expect(last!.body.code).toBe('rate_limited');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('ratelimit-limit')).toBe('10');
  });

  it('dialogue: 60 a minute pass, the 61st is 429; another bot’s budget is its own', async () => {
    const bot = await newBot();
    const other = await newBot();
    await inOneRateWindow();
    const codes = await Promise.all(
      Array.from({ length: 61 }, () => widgetCall(bot, '/v1/widget/session', { method: 'POST' }).then((r) => r.status)),
    );
    expect(codes.filter((c) => c === 201)).toHaveLength(60);
    expect(codes.filter((c) => c === 429)).toHaveLength(1);
    expect((await widgetCall(other, '/v1/widget/session', { method: 'POST' })).status).toBe(201);
  });
});

describe('widget: escalation from the widget', () => {
  it('asking for a person in words hands over like escalate:true', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const res = await widgetCall(bot, '/v1/widget/chat', {
      body: { session_id: s.session_id, message: 'I want to talk to a human operator' },
      token: s.visitor_token,
    });
    expect(res.body).toEqual({
      answer: ESCALATION_CONFIRMATION,
      session_id: s.session_id,
      handoff: true,
      visitor_message_id: expect.any(String),
    });
  });
});
