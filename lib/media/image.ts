import sharp from 'sharp';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';

/**
 * What an uploaded file really is, read by libvips (sharp) from its bytes — never from its name or the declared
 * Content-Type, which the sender chooses (docs/decisions/140-images-read-by-sharp.md). Only raster formats every browser
 * shows are accepted; SVG is not (it can carry script).
 */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export const IMAGE_TYPES: readonly ImageType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

const TYPE_OF_FORMAT: Record<string, ImageType> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

// libvips picks a loader by the bytes, and has loaders for SVG, TIFF, HEIF, JPEG 2000…: only the four formats we
// accept may be parsed at all in this process, so a file of any other kind never reaches a parser.
sharp.block({ operation: ['VipsForeignLoad'] });
sharp.unblock({
  operation: [
    'VipsForeignLoadPngBuffer',
    'VipsForeignLoadJpegBuffer',
    'VipsForeignLoadNsgifBuffer',
    'VipsForeignLoadWebpBuffer',
  ],
});

/** An image as it is stored: its type, its size in pixels, and its bytes (without their metadata, see `readImage`). */
export interface StoredImage {
  contentType: ImageType;
  width: number;
  height: number;
  bytes: Buffer;
}

const { media: M } = LIMITS;

/**
 * How the pictures we keep are encoded again: JPEG and WebP at quality 85 (a photo looks the same, and is about the
 * size it was sent at); WebP at effort 2 of 6, about half the CPU of the default for a few percent more bytes.
 */
const JPEG = { quality: 85 } as const;
const WEBP = { quality: 85, effort: 2 } as const;

/**
 * A small file may declare an enormous picture (a 65535×65535 PNG in a few dozen bytes) that every viewer, and our
 * own decoder, would try to allocate: more than 8192 pixels on a side, or 40 megapixels (an animation's frames
 * together), is 400 `bad_request`.
 */
export function checkDimensions(size: { width: number; height: number; frames?: number }): void {
  const { width, height } = size;
  const frames = size.frames ?? 1;
  if (width > M.maxSidePixels || height > M.maxSidePixels || width * height * frames > M.maxPixels) {
    throw new ApiError(
      'bad_request',
      `Images may be at most ${M.maxSidePixels} pixels on a side and ${M.maxPixels / 1_000_000} megapixels ` +
        `(an animation's frames together); this one is ${width}×${height}` +
        (frames > 1 ? ` in ${frames} frames` : ''),
    );
  }
}

const notAnImage = () =>
  new ApiError(
    'unsupported_media_type',
    `Only images can be attached: ${IMAGE_TYPES.map((t) => t.slice(6).toUpperCase()).join(', ')}`,
  );

const unreadable = (what: string) =>
  new ApiError('bad_request', `This image cannot be read: ${what}. Nothing was stored.`);

/**
 * Reads an image, checks it and makes the bytes we store:
 * - the type is the one libvips recognises (PNG, JPEG, GIF or WebP, else 415);
 * - the size is the one the decoder will use, read from the header by libvips; a file whose size cannot be read (a
 *   damaged or truncated header, a JPEG whose frame header its decoder cannot reach) is 400, never let through;
 * - past the largest picture it is 400 (`checkDimensions`), before a pixel is decoded; the decoder is bounded to the
 *   same number of pixels (`limitInputPixels`), so no header can make it allocate more;
 * - PNG, JPEG and WebP are decoded and encoded again in their own format, turned upright by their EXIF orientation:
 *   what is stored has no EXIF (a phone's photo carries where it was taken), XMP, IPTC, comments or ICC profile
 *   (colours converted to sRGB), and no bytes the picture does not show. GIF (which has no EXIF) is stored as sent:
 *   encoding a GIF again takes seconds of CPU (docs/decisions/140-images-read-by-sharp.md).
 */
export async function readImage(bytes: Buffer): Promise<StoredImage> {
  if (!bytes.length) throw notAnImage();
  let meta: sharp.Metadata;
  try {
    // The header alone: no limit here, so that a huge size is reported with its numbers rather than as a failure.
    meta = await sharp(bytes, { animated: true, limitInputPixels: false }).metadata();
  } catch (err) {
    if (/unsupported image format/i.test(String((err as Error).message))) throw notAnImage();
    throw unreadable('its header is damaged or incomplete, so its size is unknown');
  }
  const contentType = meta.format ? TYPE_OF_FORMAT[meta.format] : undefined;
  if (!contentType) throw notAnImage();
  const frames = Math.max(1, meta.pages ?? 1);
  // Upright size (a photo turned by its EXIF orientation); an animation's height is one frame's.
  const width = frames === 1 ? (meta.autoOrient?.width ?? meta.width) : meta.width;
  const height = frames === 1 ? (meta.autoOrient?.height ?? meta.height) : (meta.pageHeight ?? meta.height);
  if (!width || !height) throw unreadable('its size could not be read');

  if (contentType === 'image/gif') {
    // libvips sizes a GIF by its frames (and ignores a logical screen over 2048 pixels), browsers by its logical
    // screen (bytes 6–9 of every GIF): both must be within the limits, and the screen is what viewers show.
    checkDimensions({ width, height, frames });
    const screen = bytes.length >= 10 ? { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) } : null;
    if (!screen?.width || !screen.height) throw unreadable('its size could not be read');
    checkDimensions({ ...screen, frames });
    return { contentType, ...screen, bytes };
  }
  checkDimensions({ width, height, frames });

  const image = sharp(bytes, {
    animated: true,
    autoOrient: frames === 1,
    limitInputPixels: M.maxPixels,
    // Abort on errors (a truncated or corrupt file), not on the warnings many cameras' files raise.
    failOn: 'error',
  });
  try {
    const out =
      contentType === 'image/png'
        ? await image.png().toBuffer({ resolveWithObject: true })
        : contentType === 'image/jpeg'
          ? await image.jpeg(JPEG).toBuffer({ resolveWithObject: true })
          : await image.webp(WEBP).toBuffer({ resolveWithObject: true });
    return {
      contentType,
      width: out.info.width,
      height: out.info.pageHeight ?? out.info.height,
      bytes: out.data,
    };
  } catch {
    throw unreadable('its picture data is damaged or incomplete');
  }
}
