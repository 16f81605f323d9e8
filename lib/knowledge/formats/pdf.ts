import { createRequire } from 'node:module';
import path from 'node:path';
import type { Block, DocumentModel } from '../document';
import { UnreadableFile } from './unreadable';

/**
 * PDF with Mozilla's pdf.js (`pdfjs-dist`, the reader inside Firefox): it decrypts, decompresses and maps fonts to
 * Unicode; we only arrange the text it gives per page into lines, paragraphs, headings and list items. A PDF has no
 * structure of its own (unless tagged, which few are): a line set in a clearly larger size than the body text, short
 * and not ending a sentence, is taken for a heading, its level by its size among the larger sizes.
 */

interface Line {
  text: string;
  size: number;
  y: number;
  page: number;
}

type TextItem = { str: string; transform: number[]; hasEOL: boolean; height: number };

/** Lines of a page from pdf.js's text items: an item ends a line when it says so, or when the baseline moves. */
function linesOf(items: TextItem[], page: number): Line[] {
  const lines: Line[] = [];
  let text = '';
  let size = 0;
  let y: number | undefined;
  const end = () => {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean) lines.push({ text: clean, size: Math.round(size * 10) / 10, y: y ?? 0, page });
    text = '';
    size = 0;
    y = undefined;
  };
  for (const item of items) {
    const itemSize = Math.hypot(item.transform[2], item.transform[3]) || item.height;
    const itemY = item.transform[5];
    if (item.str && y !== undefined && Math.abs(itemY - y) > Math.max(2, itemSize * 0.5)) end();
    if (item.str) {
      if (y === undefined) y = itemY;
      text += item.str;
      size = Math.max(size, itemSize);
    }
    if (item.hasEOL) end();
  }
  end();
  return lines;
}

const BULLET = /^(?:[•▪‣◦●○■□–-]|\d{1,3}[.)])\s+(\S.*)$/;

/** Lines into blocks: headings by size, list items by their marker, paragraphs by spacing. */
function blocksOf(lines: Line[]): Block[] {
  // The body size: the one most characters are set in.
  const bySize = new Map<number, number>();
  for (const l of lines) bySize.set(l.size, (bySize.get(l.size) ?? 0) + l.text.length);
  const body = [...bySize.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  const isHeading = (l: Line) => l.size >= body * 1.15 && l.text.length <= 150 && !/[.,;:]$/.test(l.text);
  const headingSizes = [...new Set(lines.filter(isHeading).map((l) => l.size))].sort((a, b) => b - a);

  const blocks: Block[] = [];
  let paragraph: Line | undefined;
  let previous: Line | undefined;
  const flush = () => {
    if (paragraph) blocks.push({ kind: 'paragraph', text: paragraph.text, page: paragraph.page });
    paragraph = undefined;
  };
  for (const line of lines) {
    if (isHeading(line)) {
      flush();
      const level = Math.min(6, headingSizes.indexOf(line.size) + 1);
      const last = blocks[blocks.length - 1];
      // A heading set on two lines is one heading.
      if (
        last?.kind === 'heading' &&
        last.level === level &&
        previous &&
        isHeading(previous) &&
        previous.size === line.size &&
        previous.page === line.page
      ) {
        last.text += ` ${line.text}`;
      } else blocks.push({ kind: 'heading', level, text: line.text, page: line.page });
    } else {
      const bullet = BULLET.exec(line.text);
      const gap = previous && previous.page === line.page ? previous.y - line.y : Infinity;
      if (bullet) {
        flush();
        blocks.push({ kind: 'list_item', text: bullet[1], page: line.page });
      } else if (
        !paragraph &&
        blocks[blocks.length - 1]?.kind === 'list_item' &&
        previous &&
        !isHeading(previous) &&
        gap <= line.size * 1.5
      ) {
        // The wrapped continuation of a list item.
        const item = blocks[blocks.length - 1] as { text: string };
        item.text += ` ${line.text}`;
      } else if (paragraph && line.size === paragraph.size && gap > 0 && gap <= line.size * 1.6) {
        paragraph.text =
          paragraph.text.endsWith('-') && /^\p{Ll}/u.test(line.text)
            ? paragraph.text.slice(0, -1) + line.text
            : `${paragraph.text} ${line.text}`;
      } else {
        flush();
        paragraph = { ...line };
      }
    }
    previous = line;
  }
  flush();
  return blocks;
}

/** pdf.js's standard font data (for PDFs that name a standard font without embedding it), read from its package. */
function standardFontDataUrl(): string {
  const pkg = createRequire(__filename).resolve('pdfjs-dist/package.json');
  return `${path.join(path.dirname(pkg), 'standard_fonts')}${path.sep}`;
}

export async function readPdf(bytes: Buffer, opts: { maxPages: number }): Promise<DocumentModel> {
  // pdf.js is an ES module; loaded on first use, in the worker only.
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    standardFontDataUrl: standardFontDataUrl(),
    verbosity: 0,
  });
  try {
    let doc: Awaited<typeof task.promise>;
    try {
      doc = await task.promise;
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'PasswordException') {
        throw new UnreadableFile('encrypted', 'This is an encrypted PDF: remove the password and upload it again');
      }
      throw new UnreadableFile('corrupt', 'This PDF could not be read: it is damaged, or not really a PDF');
    }
    if (doc.numPages > opts.maxPages) {
      throw new UnreadableFile(
        'too_many_pages',
        `This PDF has ${doc.numPages} pages; at most ${opts.maxPages} are read: split it into smaller files`,
      );
    }
    let title: string | undefined;
    try {
      const info = (await doc.getMetadata()).info as { Title?: unknown };
      if (typeof info?.Title === 'string' && info.Title.trim()) title = info.Title.trim();
    } catch {
      // No metadata: the title comes from elsewhere.
    }
    const lines: Line[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      lines.push(...linesOf(content.items as TextItem[], n));
      page.cleanup();
    }
    const characters = lines.reduce((sum, l) => sum + l.text.replace(/\s/g, '').length, 0);
    if (characters < 10 * doc.numPages && characters < 200) {
      throw new UnreadableFile(
        'scanned',
        'This PDF looks scanned: no text to read (its pages are images). Upload a PDF with a text layer, or the text itself',
      );
    }
    return { blocks: blocksOf(lines), pages: doc.numPages, ...(title ? { title } : {}) };
  } catch (err) {
    if (err instanceof UnreadableFile) throw err;
    throw new UnreadableFile('corrupt', 'This PDF could not be read: it is damaged, or not really a PDF');
  } finally {
    await task.destroy().catch(() => undefined);
  }
}
