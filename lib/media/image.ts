/**
 * What an uploaded file really is, from its bytes (never from its name or the declared Content-Type, which the
 * sender chooses). Only raster formats every browser shows are accepted; SVG is not (it can carry script).
 */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export const IMAGE_TYPES: readonly ImageType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export interface ImageInfo {
  contentType: ImageType;
  /** Pixel size when the header states it (absent for a JPEG whose frame header is not found in the bytes). */
  width?: number;
  height?: number;
}

const ascii = (bytes: Buffer, start: number, text: string) =>
  bytes.length >= start + text.length && bytes.toString('latin1', start, start + text.length) === text;

function png(b: Buffer): ImageInfo | null {
  // Signature, then the IHDR chunk first (PNG spec 5.2, 11.2.2).
  if (b.length < 24 || !b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return null;
  }
  if (!ascii(b, 12, 'IHDR')) return null;
  return { contentType: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function gif(b: Buffer): ImageInfo | null {
  if (!(ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) || b.length < 10) return null;
  return { contentType: 'image/gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function webp(b: Buffer): ImageInfo | null {
  if (!ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WEBP') || b.length < 30) return null;
  if (ascii(b, 12, 'VP8 ')) {
    // Lossy: a key frame's start code, then 14-bit width and height.
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return { contentType: 'image/webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  if (ascii(b, 12, 'VP8L')) {
    if (b[20] !== 0x2f) return null;
    const bits = b.readUInt32LE(21);
    return { contentType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (ascii(b, 12, 'VP8X')) {
    return { contentType: 'image/webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  }
  return null;
}

function jpeg(b: Buffer): ImageInfo | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8 || b[2] !== 0xff) return null;
  // Walk the segments to the first frame header (SOF0–SOF15 but DHT, JPG and DAC) for the size.
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return { contentType: 'image/jpeg' };
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    const length = b.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { contentType: 'image/jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    }
    if (marker === 0xda || length < 2) break; // image data starts: no frame header before it
    i += 2 + length;
  }
  return { contentType: 'image/jpeg' };
}

/** The image type and size the bytes declare, or null when they are not a PNG, JPEG, GIF or WebP image. */
export function sniffImage(bytes: Buffer): ImageInfo | null {
  const info = png(bytes) ?? gif(bytes) ?? webp(bytes) ?? jpeg(bytes);
  if (!info) return null;
  // A header claiming a zero-sized image is not an image anyone can look at.
  if (info.width === 0 || info.height === 0) return null;
  return info;
}
