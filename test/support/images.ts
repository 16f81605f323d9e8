import sharp from 'sharp';
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/**
 * Images for the upload tests, made here: real files from sharp, and files whose header declares another size than
 * their pixels (what an attacker sends: a few bytes that a viewer would decode into gigabytes).
 */

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A well-formed PNG declaring `width`×`height` (8-bit RGB) with a few bytes of pixel data: a header reader's truth. */
export function pngDeclaring(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc(64))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const solid = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } });

/**
 * A small baseline JPEG made by sharp whose frame header (SOF0) is rewritten to declare `width`×`height`. With
 * `strayByte`, one byte (0x00) stands before the SOF0 marker: JPEG decoders skip it with a warning and read the size;
 * the hand-written sniffer stopped there and found no size at all (issue 40, item 8).
 */
export async function jpegDeclaring(
  width: number,
  height: number,
  opts: { strayByte?: boolean } = {},
): Promise<Buffer> {
  const jpeg = await solid(16, 16).jpeg().toBuffer();
  let i = 2; // after SOI: walk the segments to SOF0
  while (!(jpeg[i] === 0xff && jpeg[i + 1] === 0xc0)) {
    if (jpeg[i] !== 0xff || i >= jpeg.length) throw new Error('no SOF0 in the JPEG sharp made');
    i += 2 + jpeg.readUInt16BE(i + 2);
  }
  const patched = Buffer.from(jpeg);
  patched.writeUInt16BE(height, i + 5);
  patched.writeUInt16BE(width, i + 7);
  if (!opts.strayByte) return patched;
  return Buffer.concat([patched.subarray(0, i), Buffer.from([0x00]), patched.subarray(i)]);
}

/** A GIF made by sharp (one 4×3 frame) whose logical screen, the size browsers draw it at, is `width`×`height`. */
export async function gifWithScreen(width: number, height: number): Promise<Buffer> {
  const gif = Buffer.from(await solid(4, 3).gif().toBuffer());
  gif.writeUInt16LE(width, 6);
  gif.writeUInt16LE(height, 8);
  return gif;
}

/** A lossless WebP made by sharp whose VP8L header is rewritten to declare `width`×`height` (14 bits a side). */
export async function webpDeclaring(width: number, height: number): Promise<Buffer> {
  const webp = Buffer.from(await solid(4, 3).webp({ lossless: true }).toBuffer());
  if (webp.toString('latin1', 12, 16) !== 'VP8L') throw new Error('sharp made no simple lossless WebP');
  webp.writeUInt32LE(((webp.readUInt32LE(21) & ~0xfffffff) | (width - 1) | ((height - 1) << 14)) >>> 0, 21);
  return webp;
}

/** A PNG of random pixels: as many bytes as pixels × 3, whatever the compression. */
export async function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** Real images of each accepted type, as a browser would send them. */
export async function realImage(type: 'png' | 'jpeg' | 'gif' | 'webp', width = 30, height = 20): Promise<Buffer> {
  return solid(width, height).toFormat(type).toBuffer();
}

/**
 * A phone's photo: a JPEG with EXIF naming the camera and where it was taken (a GPS IFD), turned by its EXIF
 * orientation (6: shown rotated 90°, so the 40×20 pixels stored are a 20×40 picture).
 */
export async function photoWithGps(): Promise<Buffer> {
  return solid(40, 20)
    .jpeg()
    .withExif({
      IFD0: { Make: 'PhoneMaker', Model: 'Phone 1' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 7/1' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

/**
 * Whether EXIF data as sharp's metadata gives it (TIFF, after `Exif\0\0` from a JPEG or WebP) has a GPS IFD (tag
 * 0x8825 in IFD0).
 */
export function hasGpsIfd(exif: Buffer | undefined): boolean {
  if (!exif) return false;
  const tiff = exif.toString('latin1', 0, 4) === 'Exif' ? exif.subarray(6) : exif;
  const le = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const ifd0 = le ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  for (let n = 0; n < u16(ifd0); n++) if (u16(ifd0 + 2 + n * 12) === 0x8825) return true;
  return false;
}

/** What a stored image is: its format, size, and whatever metadata it still carries. */
export async function describeImage(bytes: Buffer) {
  const m = await sharp(bytes).metadata();
  return {
    format: m.format,
    width: m.width,
    height: m.height,
    metadata: { exif: m.exif, xmp: m.xmp, iptc: m.iptc, icc: m.icc, comments: m.comments, orientation: m.orientation },
  };
}

/** The decoded pixels of an image (stored images are encoded again: compare pictures, not bytes). */
export async function pixels(bytes: Buffer): Promise<Buffer> {
  return sharp(bytes).raw().toBuffer();
}
