import { describe, expect, it } from '@jest/globals';
import { sniffImage } from '../../lib/media/image';
import { checkDimensions } from '../../lib/media/service';

/**
 * Image dimensions are capped (issue 17, item 9): the size an image's header declares is what a viewer allocates to
 * decode it, so a few dozen bytes claiming 65535×65535 are refused before they are stored.
 */

/** A PNG that is only its signature and IHDR chunk (all the sniffer reads), declaring `width`×`height`. */
function pngHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

function gifHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/** An extended WebP (VP8X): 24-bit width and height minus one. */
function webpHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(22, 4);
  b.write('WEBP', 8, 'latin1');
  b.write('VP8X', 12, 'latin1');
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

/** A JPEG whose first segment is a baseline frame header (SOF0). */
function jpegHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(20);
  b.set([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08], 0);
  b.writeUInt16BE(height, 7);
  b.writeUInt16BE(width, 9);
  return b;
}

const verdict = (bytes: Buffer) => {
  const info = sniffImage(bytes);
  if (!info) return 'not an image';
  try {
    checkDimensions(info);
    return `ok ${info.width}x${info.height}`;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe('image dimensions', () => {
  it.each([
    ['PNG', pngHeader],
    ['GIF', gifHeader],
    ['WebP', webpHeader],
    ['JPEG', jpegHeader],
  ])('%s: up to 8192 px a side and 40 megapixels, refused beyond with bad_request', (_kind, make) => {
    expect(verdict(make(8192, 4096))).toBe('ok 8192x4096'); // 33.5 megapixels
    expect(verdict(make(1, 8192))).toBe('ok 1x8192');
    expect(verdict(make(8193, 1))).toBe('bad_request');
    expect(verdict(make(1, 8193))).toBe('bad_request');
    expect(verdict(make(8000, 6000))).toBe('bad_request'); // 48 megapixels, each side under 8192
  });

  it('the 65535×65535 PNG header of the review is refused, and says why', () => {
    const info = sniffImage(pngHeader(65535, 65535))!;
    expect(info).toMatchObject({ contentType: 'image/png', width: 65535, height: 65535 });
    expect(() => checkDimensions(info)).toThrow(/at most 8192 pixels on a side.*65535×65535/);
  });

  it('a JPEG whose size is not found in its header is let through (there is nothing to measure)', () => {
    expect(() => checkDimensions({})).not.toThrow();
  });
});
