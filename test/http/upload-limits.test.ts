import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { LIMITS } from '../../lib/limits';
import { createMediaService, newMediaId } from '../../lib/media/service';
import { createS3Store } from '../../lib/media/s3';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { startFakeS3 } from '../support/fake-s3';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { describeImage, hasGpsIfd, jpegDeclaring, noisePng, photoWithGps, pngDeclaring } from '../support/images';
import { PNG_1X1, widgetCall, widgetSession } from '../support/widget';

/**
 * Visitors' uploads (issue 17, item 9; docs/decisions/108-upload-quotas.md): pictures too large to decode
 * are refused, a conversation, an agent's day and a workspace's storage have quotas, and images past their retention
 * are deleted by the maintenance schedule, from the bucket too.
 */

/** A conversation with one image (the upload starts it); returns its session and a way to upload more. */
async function conversationWithImage(bot: BootstrapResult) {
  const s = await widgetSession(bot);
  const upload = (bytes: Buffer) =>
    widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, {
      method: 'POST',
      rawBody: bytes,
      token: s.visitor_token,
      headers: { 'Content-Type': 'image/png' },
    });
  const first = await upload(PNG_1X1);
  expect(first.status).toBe(201);
  return { sessionId: s.session_id, upload, firstId: first.body.message.attachment.id as string };
}

/** Media rows as earlier uploads leave them (no bytes needed: the quotas read sizes and times). */
async function addMediaRows(
  bot: BootstrapResult,
  sessionId: string,
  rows: { size: number; age?: string; count?: number },
): Promise<string[]> {
  const ids = Array.from({ length: rows.count ?? 1 }, () => newMediaId());
  for (const id of ids) {
    await testDb().query(
      `INSERT INTO media (id, bot_id, session_id, content_type, size, width, height, sha256, store, data, created_at)
       VALUES ($1, $2, $3, 'image/png', $4, 1, 1, '\\x00', 'postgres', '\\x00', now() - $5::interval)`,
      [id, bot.bot_id, sessionId, rows.size, rows.age ?? '0 seconds'],
    );
  }
  return ids;
}

describe('upload limits', () => {
  it('refuses an image declaring 65535×65535 pixels with 400, storing nothing', async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    const res = await upload(pngDeclaring(65535, 65535)); // a well-formed PNG of 130 bytes
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('65535×65535') });
    const stored = await testDb().query(`SELECT count(*)::int AS n FROM media WHERE session_id = $1`, [sessionId]);
    expect(stored.rows[0].n).toBe(1);
  });

  it('refuses a JPEG with one stray byte before a frame header declaring 65000×65000 (issue 40, item 8)', async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    const res = await upload(await jpegDeclaring(65000, 65000, { strayByte: true }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('65000×65000') });
    // A JPEG whose frame header cannot be reached at all has no size: refused too, saying so.
    const jpeg = await jpegDeclaring(64, 48);
    const noSize = await upload(jpeg.subarray(0, jpeg.indexOf(Buffer.from([0xff, 0xc0]))));
    expect(noSize.status).toBe(400);
    expect(noSize.body).toMatchObject({ code: 'bad_request', error: expect.stringMatching(/cannot be read.*size/) });
    const stored = await testDb().query(`SELECT count(*)::int AS n FROM media WHERE session_id = $1`, [sessionId]);
    expect(stored.rows[0].n).toBe(1);
  });

  it("stores a visitor's photo upright and without its EXIF (where it was taken), as a JPEG", async () => {
    const bot = await newBot();
    const { upload } = await conversationWithImage(bot);
    const photo = await photoWithGps();
    expect(hasGpsIfd((await describeImage(photo)).metadata.exif)).toBe(true);
    const res = await upload(photo);
    expect(res.status).toBe(201);
    const { attachment } = res.body.message;
    expect(attachment).toMatchObject({ content_type: 'image/jpeg', width: 20, height: 40 });
    const file = Buffer.from(await (await fetch(attachment.url)).arrayBuffer());
    expect(file.length).toBe(attachment.size);
    const served = await describeImage(file);
    expect(served).toMatchObject({ format: 'jpeg', width: 20, height: 40 });
    expect(served.metadata.exif).toBeUndefined();
    expect(served.metadata.xmp).toBeUndefined();
    expect(file.includes(Buffer.from('PhoneMaker'))).toBe(false);
  });

  it('uploads sent at the same instant never pass a quota together: exactly what is left is stored', async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    const left = 3;
    await addMediaRows(bot, sessionId, { size: 100, count: LIMITS.media.imagesPerConversation - 1 - left });
    // 8 at once (with the first, 9: within the widget's 10 uploads a minute), for 3 places. Photos of 3 MiB: storing
    // one takes a while, the time in which an upload checked before another was stored could see room that is gone.
    const photo = await noisePng(1000, 1000);
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => upload(photo)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(left);
    expect(statuses.filter((s) => s === 413)).toHaveLength(8 - left);
    const stored = await testDb().query(`SELECT count(*)::int AS n FROM media WHERE session_id = $1`, [sessionId]);
    expect(stored.rows[0].n).toBe(LIMITS.media.imagesPerConversation);
  });

  it(`a conversation holds ${LIMITS.media.imagesPerConversation} images: the next is 413`, async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    await addMediaRows(bot, sessionId, { size: 100, count: LIMITS.media.imagesPerConversation - 2 });
    expect((await upload(PNG_1X1)).status).toBe(201); // the 20th
    const refused = await upload(PNG_1X1);
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: 'payload_too_large', quota: 'conversation_images' });
    // Another conversation of the same agent still takes images.
    expect((await conversationWithImage(bot)).firstId).toMatch(/^med_/);
  });

  it('an agent takes 50 MiB of images a day: past it 429 with Retry-After until the oldest leaves the window', async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    // Earlier today (an hour ago) nearly the whole day's allowance; yesterday's uploads no longer count.
    await addMediaRows(bot, sessionId, { size: LIMITS.media.botBytesPerDay - 100, age: '1 hour' });
    await addMediaRows(bot, sessionId, { size: 10_000_000, age: '25 hours' });
    const refused = await upload(PNG_1X1);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', quota: 'bot_bytes_per_day' });
    const retry = Number(refused.headers.get('retry-after'));
    // The first upload (seconds ago) is the oldest of the window, so about 24 hours; never less than the hour-old one's.
    expect(retry).toBeGreaterThan(23 * 3600 - 60);
    expect(retry).toBeLessThanOrEqual(24 * 3600);
  });

  it('a workspace keeps 500 MiB of images: past it 413, whatever the day', async () => {
    const bot = await newBot();
    const { upload, sessionId } = await conversationWithImage(bot);
    await addMediaRows(bot, sessionId, { size: LIMITS.media.workspaceBytesStored / 4, age: '3 days', count: 4 });
    const refused = await upload(PNG_1X1);
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: 'payload_too_large', quota: 'workspace_bytes' });
  });
});

describe('retention of visitors images', () => {
  let s3: Awaited<ReturnType<typeof startFakeS3>>;
  let connection: Connection | undefined;
  const creds = { bucket: 'retention', accessKeyId: 'AKIATESTRETENTION', secretAccessKey: 'retention/secret' };
  beforeAll(async () => {
    s3 = await startFakeS3(creds);
  });
  afterAll(async () => {
    await s3?.close();
    await connection?.close();
  });

  it('deletes images past the retention from the bucket and the database; newer ones stay', async () => {
    const bot = await newBot();
    const { sessionId } = await conversationWithImage(bot);
    const bucket = createS3Store({ endpoint: s3.endpoint, region: 'us-east-1', ...creds });
    const media = createMediaService({ db: testDb(), bucket, retentionDays: 90 });
    const old = newMediaId();
    const recent = newMediaId();
    for (const [id, age] of [
      [old, '91 days'],
      [recent, '89 days'],
    ]) {
      await bucket.put(`media/${id}`, PNG_1X1, 'image/png');
      await testDb().query(
        `INSERT INTO media (id, bot_id, session_id, content_type, size, sha256, store, created_at)
         VALUES ($1, $2, $3, 'image/png', $4, '\\x00', 's3', now() - $5::interval)`,
        [id, bot.bot_id, sessionId, PNG_1X1.length, age],
      );
    }
    expect(await media.expire()).toBeGreaterThanOrEqual(1);
    expect(s3.objects.has(`media/${old}`)).toBe(false);
    expect(s3.objects.has(`media/${recent}`)).toBe(true);
    const left = await testDb().query(`SELECT id FROM media WHERE id = ANY($1)`, [[old, recent]]);
    expect(left.rows.map((r) => r.id)).toEqual([recent]);
  });

  it('the maintenance schedule applies it (MEDIA_RETENTION_DAYS, 90 by default): the image answers 404 after', async () => {
    const bot = await newBot();
    const { sessionId, firstId } = await conversationWithImage(bot);
    const [old] = await addMediaRows(bot, sessionId, { size: 1, age: '91 days' });
    expect((await http(`/media/${old}`)).status).toBe(200);

    const info = stackInfo();
    connection = await Connection.connect({ address: info.temporalAddress });
    const client = new Client({ connection, namespace: info.namespace });
    const result = await client.workflow.execute(maintenanceWorkflow, {
      taskQueue: info.taskQueue,
      workflowId: `test-media-retention-${randomUUID()}`,
      workflowExecutionTimeout: '30 seconds',
    });
    expect(result.periodic?.expiredMedia).toBeGreaterThanOrEqual(1);
    expect((await http(`/media/${old}`)).status).toBe(404);
    expect((await http(`/media/${firstId}`)).status).toBe(200);
  });
});
