import { describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { checkDimensions, readImage } from '../../lib/media/image';
import {
  describeImage,
  gifWithScreen,
  hasGpsIfd,
  jpegDeclaring,
  photoWithGps,
  pixels,
  pngDeclaring,
  realImage,
  webpDeclaring,
} from '../support/images';

/**
 * Image dimensions are capped (issue 17, item 9) and read by libvips, the decoder itself (issue 40, item 8): the size
 * an image's header declares is what a viewer allocates to decode it, so a few bytes claiming 65535×65535 are refused
 * before they are stored, and so is an image whose size cannot be read.
 */

/** What the upload would answer: the stored size, or the error's code and message. */
async function verdict(bytes: Buffer): Promise<string> {
  try {
    const image = await readImage(bytes);
    return `ok ${image.width}x${image.height}`;
  } catch (err) {
    return `${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}

describe('image dimensions', () => {
  it('up to 8192 px a side and 40 megapixels (an animation’s frames together), refused beyond with bad_request', () => {
    const ok = (size: { width: number; height: number; frames?: number }) => () => checkDimensions(size);
    expect(ok({ width: 8192, height: 4096 })).not.toThrow(); // 33.5 megapixels
    expect(ok({ width: 1, height: 8192 })).not.toThrow();
    expect(ok({ width: 8193, height: 1 })).toThrow(/at most 8192 pixels on a side.*8193×1/);
    expect(ok({ width: 1, height: 8193 })).toThrow(/1×8193/);
    expect(ok({ width: 8000, height: 6000 })).toThrow(/40 megapixels/); // 48 megapixels, each side under 8192
    expect(ok({ width: 1000, height: 1000, frames: 40 })).not.toThrow();
    expect(ok({ width: 1000, height: 1000, frames: 41 })).toThrow(/1000×1000 in 41 frames/);
  });

  it.each([
    ['PNG', async (w: number, h: number) => pngDeclaring(w, h)],
    ['JPEG', (w: number, h: number) => jpegDeclaring(w, h)],
    ['WebP', webpDeclaring],
    ['GIF (its logical screen)', gifWithScreen],
  ])('%s: a header declaring more is refused by its size, before any pixel is decoded', async (_kind, make) => {
    expect(await verdict(await make(8193, 2))).toMatch(/^bad_request: .*at most 8192 pixels on a side.*8193×2/);
    expect(await verdict(await make(8000, 6000))).toMatch(/^bad_request: .*8000×6000/);
  });

  it('the 65535×65535 PNG of the review is refused, and says why', async () => {
    expect(await verdict(pngDeclaring(65535, 65535))).toMatch(/^bad_request: .*at most 8192 pixels.*65535×65535/);
  });

  it('a JPEG with one stray byte before a frame header declaring 65000×65000 is refused (the sniffer let it through)', async () => {
    const bytes = await jpegDeclaring(65000, 65000, { strayByte: true });
    expect(bytes.length).toBeLessThan(1000);
    expect(await verdict(bytes)).toMatch(/^bad_request: .*65000×65000/);
  });

  it('an image whose size cannot be read is refused with bad_request saying so, never let through', async () => {
    const jpeg = await realImage('jpeg');
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    for (const bytes of [
      jpeg.subarray(0, sof), // a JPEG cut before its frame header: no size anywhere
      pngDeclaring(640, 480).subarray(0, 20), // a PNG cut inside its header
      Buffer.from('GIF89a'), // a signature and nothing after it
    ]) {
      expect(await verdict(bytes)).toMatch(/^bad_request: This image cannot be read: .*size/);
    }
    // A header that reads, over pixel data cut short: refused when decoded.
    const photo = await sharp(Buffer.from(Array.from({ length: 64 * 64 * 3 }, (_, i) => (i * 7919) % 251)), {
      raw: { width: 64, height: 64, channels: 3 },
    })
      .jpeg()
      .toBuffer();
    expect(await verdict(photo)).toBe('ok 64x64');
    expect(await verdict(photo.subarray(0, photo.length / 2))).toMatch(
      /^bad_request: This image cannot be read: .*data/,
    );
  });

  it('real images pass with their size', async () => {
    for (const type of ['png', 'jpeg', 'gif', 'webp'] as const) {
      expect(await verdict(await realImage(type, 30, 20))).toBe('ok 30x20');
    }
    expect(await verdict(await realImage('png', 8192, 1))).toBe('ok 8192x1');
  });
});

describe('what is stored', () => {
  it('a photo is stored upright and without its EXIF (camera, GPS position), in its own type', async () => {
    const photo = await photoWithGps();
    const sent = await describeImage(photo);
    expect(hasGpsIfd(sent.metadata.exif)).toBe(true);
    expect(sent).toMatchObject({ format: 'jpeg', width: 40, height: 20, metadata: { orientation: 6 } });

    const stored = await readImage(photo);
    expect(stored).toMatchObject({ contentType: 'image/jpeg', width: 20, height: 40 });
    const kept = await describeImage(stored.bytes);
    expect(kept).toMatchObject({ format: 'jpeg', width: 20, height: 40 });
    expect(kept.metadata).toEqual({
      exif: undefined,
      xmp: undefined,
      iptc: undefined,
      icc: undefined,
      comments: undefined,
      orientation: undefined,
    });
    expect(stored.bytes.includes(Buffer.from('PhoneMaker'))).toBe(false);
  });

  it('PNG and WebP lose their EXIF too and keep their pixels; bytes after the picture are not kept', async () => {
    const exif = { IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' } };
    const png = await sharp({ create: { width: 3, height: 2, channels: 4, background: '#10203040' } })
      .png()
      .withExif(exif)
      .toBuffer();
    const webp = await sharp(png).webp({ lossless: true }).withExif(exif).toBuffer();
    for (const [bytes, type] of [
      [png, 'image/png'],
      [webp, 'image/webp'],
    ] as const) {
      expect(hasGpsIfd((await describeImage(bytes)).metadata.exif)).toBe(true);
      const stored = await readImage(Buffer.concat([bytes, Buffer.from('<script>trailing</script>')]));
      expect(stored.contentType).toBe(type);
      expect((await describeImage(stored.bytes)).metadata.exif).toBeUndefined();
      expect(stored.bytes.includes(Buffer.from('<script>'))).toBe(false);
      if (type === 'image/png') expect((await pixels(stored.bytes)).equals(await pixels(png))).toBe(true);
    }
  });
});
