import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, newBot, startOwnPlatform, testDb, type OwnPlatform } from '../support/helpers';
import { startFakeS3 } from '../support/fake-s3';
import { pixels } from '../support/images';
import { LIMITS } from '../../lib/limits';
import { newMediaId } from '../../lib/media/service';
import { PNG_1X1 } from '../support/widget';

/**
 * Attachments in an S3-compatible bucket (`MEDIA_STORE=s3`): an API and worker of their own pointed at a fake S3 on
 * loopback that checks every request's signature. The bytes go to the bucket, not the database; `/media/{id}` reads
 * them back; erasing the visitor deletes the object.
 */
const creds = { bucket: 'agent-media', accessKeyId: 'AKIATESTTESTTEST', secretAccessKey: 'test/secret+key' };

let s3: Awaited<ReturnType<typeof startFakeS3>>;
let own: OwnPlatform;
beforeAll(async () => {
  s3 = await startFakeS3(creds);
  own = await startOwnPlatform('media-s3', {
    MEDIA_STORE: 's3',
    MEDIA_S3_ENDPOINT: s3.endpoint,
    MEDIA_S3_BUCKET: creds.bucket,
    MEDIA_S3_REGION: 'eu-central-1',
    MEDIA_S3_ACCESS_KEY_ID: creds.accessKeyId,
    MEDIA_S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
  });
}, 180_000);
afterAll(async () => {
  await own?.stop();
  await s3?.close();
});

describe('attachments in an S3-compatible bucket', () => {
  it('stores the bytes in the bucket, serves them back, and deletes them with the visitor', async () => {
    const bot = await newBot();
    const base = own.baseUrl;
    const key = encodeURIComponent(bot.keys.public_key);
    const session = await http(`/v1/widget/session?key=${key}`, { method: 'POST', baseUrl: base });
    const { session_id, visitor_token } = session.body;
    const up = await http(`/v1/widget/attachments?key=${key}&session_id=${session_id}`, {
      rawBody: PNG_1X1,
      headers: { 'X-Visitor-Token': visitor_token, 'Content-Type': 'image/png' },
      baseUrl: base,
    });
    expect(up.status).toBe(201);
    const id: string = up.body.message.attachment.id;
    expect(up.body.message.attachment.url).toBe(`${base}/media/${id}`);

    // The picture sent, encoded again without its metadata (lib/media/image.ts).
    const stored = s3.objects.get(`media/${id}`)!;
    expect(stored.contentType).toBe('image/png');
    expect(stored.body.length).toBe(up.body.message.attachment.size);
    expect((await pixels(stored.body)).equals(await pixels(PNG_1X1))).toBe(true);
    const row = await testDb().query(`SELECT store, data FROM media WHERE id = $1`, [id]);
    expect(row.rows[0]).toEqual({ store: 's3', data: null });

    const file = await fetch(`${base}/media/${id}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(stored.body)).toBe(true);

    const erased = await http('/v1/api/visitors/erase', {
      key: bot.keys.secret_key,
      body: { session_id },
      baseUrl: base,
    });
    expect(erased.status).toBe(200);
    expect(s3.objects.has(`media/${id}`)).toBe(false);
    expect((await http(`/media/${id}`, { baseUrl: base })).status).toBe(404);
    // Every request the store made was signed correctly.
    expect(s3.requests.filter((r) => r.status >= 400 && r.status !== 404)).toEqual([]);
  });

  it('an image refused by a quota leaves nothing in the bucket', async () => {
    const bot = await newBot();
    const base = own.baseUrl;
    const key = encodeURIComponent(bot.keys.public_key);
    const { session_id, visitor_token } = (
      await http(`/v1/widget/session?key=${key}`, { method: 'POST', baseUrl: base })
    ).body;
    const upload = () =>
      http(`/v1/widget/attachments?key=${key}&session_id=${session_id}`, {
        rawBody: PNG_1X1,
        headers: { 'X-Visitor-Token': visitor_token, 'Content-Type': 'image/png' },
        baseUrl: base,
      });
    expect((await upload()).status).toBe(201);
    // The conversation's other images, as earlier uploads left them.
    for (let i = 1; i < LIMITS.media.imagesPerConversation; i++) {
      await testDb().query(
        `INSERT INTO media (id, bot_id, session_id, content_type, size, sha256, store)
         VALUES ($1, $2, $3, 'image/png', 1, '\\x00', 's3')`,
        [newMediaId(), bot.bot_id, session_id],
      );
    }
    const before = new Set(s3.objects.keys());
    const requestsBefore = s3.requests.length;
    const refused = await upload();
    expect(refused.body).toMatchObject({ code: 'payload_too_large', quota: 'conversation_images' });
    expect([...s3.objects.keys()].filter((k) => !before.has(k))).toEqual([]);
    // It was put first (a row never points at a missing object), then deleted with the refusal.
    const made = s3.requests.slice(requestsBefore).map((r) => [r.method, r.status]);
    expect(made).toEqual([
      ['PUT', 200],
      ['DELETE', 204],
    ]);
  });
});
