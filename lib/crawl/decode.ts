import { TextDecoder } from 'node:util';

/** A fetched page's bytes as text (lib/crawl/crawler.ts reads them before lib/crawl/extract.ts). */

/** Whether a response is an HTML document, by Content-Type, or by sniffing when the server sent none. */
export function isHtml(contentType: string | undefined, body: Buffer): boolean {
  if (contentType) {
    const mime = contentType.split(';')[0].trim().toLowerCase();
    return mime === 'text/html' || mime === 'application/xhtml+xml';
  }
  const head = body
    .subarray(0, 512)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart();
  return /^<(!doctype\s+html|html|head|body)[\s>]/i.test(head);
}

function decoderFor(label: string | undefined): TextDecoder | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim().replace(/^["']|["']$/g, ''));
  } catch {
    return undefined; // unknown label: fall through to the next source
  }
}

/**
 * Decodes an HTML body following the HTML encoding sniffing order: byte order mark, then the Content-Type charset,
 * then a `<meta charset>` / `<meta http-equiv>` in the first 1024 bytes, then UTF-8 (what nearly all of today's web
 * uses, rather than the contract's legacy windows-1252 default).
 */
export function decodeHtml(body: Buffer, contentType?: string): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return new TextDecoder('utf-8').decode(body);
  if (body[0] === 0xfe && body[1] === 0xff) return new TextDecoder('utf-16be').decode(body);
  if (body[0] === 0xff && body[1] === 0xfe) return new TextDecoder('utf-16le').decode(body);
  const fromHeader = decoderFor(/charset\s*=\s*([^;\s]+)/i.exec(contentType ?? '')?.[1]);
  if (fromHeader) return fromHeader.decode(body);
  // The prescan reads bytes as latin1: markup is ASCII in every encoding a page can declare this way.
  const prescan = body.subarray(0, 1024).toString('latin1');
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i.exec(prescan)?.[1];
  // A page cannot declare itself UTF-16 in ASCII-compatible bytes; browsers read such a declaration as UTF-8.
  const fromMeta = meta && !/^utf-?16/i.test(meta) ? decoderFor(meta) : undefined;
  return (fromMeta ?? new TextDecoder('utf-8')).decode(body);
}
