import { describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { readImage } from '../../lib/media/image';
import { signV4 } from '../../lib/media/s3';
import { createSecretBox } from '../../lib/secret-box';
import { visitorToken, visitorTokenMatches } from '../../lib/widget/visitor-token';
import { WidgetOrigin } from '../../lib/schemas/dashboard';
import { pngDeclaring, realImage } from '../support/images';
import { PNG_1X1 } from '../support/widget';

const GIF_1X1 = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

describe('readImage: the type from the bytes', () => {
  it('recognises PNG, GIF, JPEG and WebP with their size, whatever they were called', async () => {
    expect(await readImage(PNG_1X1)).toMatchObject({ contentType: 'image/png', width: 1, height: 1 });
    expect(await readImage(GIF_1X1)).toMatchObject({ contentType: 'image/gif', width: 1, height: 1 });
    expect(await readImage(await realImage('jpeg', 3, 2))).toMatchObject({
      contentType: 'image/jpeg',
      width: 3,
      height: 2,
    });
    expect(await readImage(await realImage('webp', 640, 480))).toMatchObject({
      contentType: 'image/webp',
      width: 640,
      height: 480,
    });
  });

  it('refuses everything else with 415, whatever it claims to be', async () => {
    const tiff = await sharp({ create: { width: 2, height: 2, channels: 3, background: 'red' } })
      .tiff()
      .toBuffer();
    for (const bytes of [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'),
      Buffer.from('<html><script>alert(1)</script>'),
      tiff, // an image, but no browser shows it
      Buffer.from('RIFF\0\0\0\0WAVEfmt '),
      Buffer.from('%PDF-1.4'),
      Buffer.alloc(64),
      Buffer.alloc(0),
    ]) {
      await expect(readImage(bytes)).rejects.toMatchObject({ code: 'unsupported_media_type' });
    }
    // A header stating a zero-sized image is no image anyone can look at.
    await expect(readImage(pngDeclaring(0, 1))).rejects.toMatchObject({ code: 'bad_request' });
  });
});

describe('SigV4 signing (S3-compatible media store)', () => {
  const creds = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

  it('matches AWS’s documented GET Object example', () => {
    const headers = signV4({
      method: 'GET',
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      headers: { range: 'bytes=0-9' },
      payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      region: 'us-east-1',
      amzDate: '20130524T000000Z',
      ...creds,
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('matches AWS’s documented PUT Object example (an encoded key, extra signed headers)', () => {
    const body = 'Welcome to Amazon S3.';
    const headers = signV4({
      method: 'PUT',
      url: new URL('https://examplebucket.s3.amazonaws.com/test$file.text'),
      headers: { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash: '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072',
      region: 'us-east-1',
      amzDate: '20130524T000000Z',
      ...creds,
    });
    expect(body.length).toBe(21);
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,' +
        'SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,' +
        'Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
    );
  });
});

describe('widget visitor tokens', () => {
  const box = createSecretBox('11'.repeat(32));

  it('open one session of one bot, under one encryption key', () => {
    const token = visitorToken(box, 'bot_a', 'session-1');
    expect(token).toMatch(/^vt_[A-Za-z0-9_-]{43}$/);
    expect(visitorTokenMatches(box, 'bot_a', 'session-1', token)).toBe(true);
    expect(visitorTokenMatches(box, 'bot_a', 'session-2', token)).toBe(false);
    expect(visitorTokenMatches(box, 'bot_b', 'session-1', token)).toBe(false);
    expect(visitorTokenMatches(box, 'bot_a', 'session-1', undefined)).toBe(false);
    expect(visitorTokenMatches(box, 'bot_a', 'session-1', token.slice(0, -1))).toBe(false);
    expect(visitorTokenMatches(createSecretBox('22'.repeat(32)), 'bot_a', 'session-1', token)).toBe(false);
    // The separator keeps (bot, session) pairs apart.
    expect(visitorToken(box, 'bot_a\nx', 'y')).not.toBe(visitorToken(box, 'bot_a', 'x\ny'));
  });
});

describe('allowed widget origins', () => {
  it('are scheme://host[:port] as browsers send them', () => {
    expect(WidgetOrigin.parse('HTTPS://Shop.Example.com:443/')).toBe('https://shop.example.com');
    expect(WidgetOrigin.parse('http://localhost:3000')).toBe('http://localhost:3000');
    for (const bad of ['shop.example.com', 'https://x.example/path', 'https://x.example?q=1', 'javascript:alert(1)']) {
      expect(WidgetOrigin.safeParse(bad).success).toBe(false);
    }
  });
});
