/**
 * A document as the knowledge base reads it: blocks in reading order, whatever the format it came in (a PDF, a Word
 * file, Markdown, HTML, a CSV price list, pasted text, a scanned page). The readers in ./formats produce it; the
 * splitter (./chunk.ts, `splitDocument`) turns it into passages that never mix sections and carry their heading path
 * and page. Pure code: no I/O, no parser libraries (those stay in the readers).
 */

interface BlockBase {
  /** 1-based page the block is on, for paged formats (PDF); absent elsewhere. */
  page?: number;
}

export type Block = BlockBase &
  (
    | { kind: 'heading'; level: number; text: string }
    | { kind: 'paragraph'; text: string }
    | { kind: 'list_item'; text: string }
    /** A row of a table; with `header`, its cells are read as "Header: value" so the row stands alone. */
    | { kind: 'table_row'; cells: string[]; header?: string[] }
    | { kind: 'code'; text: string }
  );

export interface DocumentModel {
  /** The document's own title (PDF metadata, an HTML `<title>`, a first `#` heading), if it names one. */
  title?: string;
  blocks: Block[];
  /** Pages of a paged format. */
  pages?: number;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * A block's text as a passage holds it. A table row with a header becomes `Product: Lamp; Price: 12 €`, so a row
 * found alone still says what each value is; cells without a header name are kept as they are.
 */
export function blockText(block: Block): string {
  switch (block.kind) {
    case 'table_row': {
      const cells = block.cells.map(collapse);
      if (!block.header?.some((h) => collapse(h))) return cells.filter(Boolean).join(' | ');
      return cells
        .map((cell, i) => {
          const name = collapse(block.header?.[i] ?? '');
          if (!cell) return '';
          return name && name !== cell ? `${name}: ${cell}` : cell;
        })
        .filter(Boolean)
        .join('; ');
    }
    case 'list_item':
      return `- ${block.text.trim()}`;
    case 'code':
      return block.text.replace(/\s+$/, '');
    default:
      return block.text.trim();
  }
}

/** Whether a block has anything to read. */
export function hasText(block: Block): boolean {
  return block.kind === 'table_row' ? block.cells.some((c) => c.trim()) : block.text.trim() !== '';
}

/**
 * The document as one plain text (a source's `text`, shown in the dashboard and returned by GET): headings on lines
 * of their own marked with `#` as in Markdown, blank lines between paragraphs, one line per list item and table row.
 */
export function renderDocument(doc: DocumentModel): string {
  const out: string[] = [];
  let previous: Block['kind'] | undefined;
  for (const block of doc.blocks) {
    if (!hasText(block)) continue;
    const text =
      block.kind === 'heading' ? `${'#'.repeat(clampLevel(block.level))} ${collapse(block.text)}` : blockText(block);
    const line = block.kind === 'code' ? `\`\`\`\n${text}\n\`\`\`` : text;
    // List items and table rows of one run stay on consecutive lines; everything else is its own paragraph.
    const tight = (block.kind === 'list_item' || block.kind === 'table_row') && previous === block.kind;
    if (out.length) out.push(tight ? '\n' : '\n\n');
    out.push(line);
    previous = block.kind;
  }
  return out.join('');
}

export function clampLevel(level: number): number {
  return Math.min(6, Math.max(1, Math.trunc(level) || 1));
}

const ATX_HEADING = /^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/;
const LIST_ITEM = /^[ \t]*(?:[-*+•▪‣◦–]|\d{1,3}[.)])[ \t]+(\S.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Pasted text (and the text of a scanned page) read as Markdown-ish plain text: `#` headings, fenced code, list
 * items (`-`, `*`, `•`, `1.`), and paragraphs separated by blank lines; lines of one paragraph stay together. Nothing
 * is lost: every non-blank line lands in some block. Deliberately forgiving — people paste what they have, not
 * CommonMark — and linear in the text.
 */
export function readPlainText(text: string): DocumentModel {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let paragraph: string[] = [];
  const flush = () => {
    const joined = paragraph.join('\n').trim();
    if (joined) blocks.push({ kind: 'paragraph', text: joined });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !lines[j].trimStart().startsWith(fence[1])) body.push(lines[j++]);
      if (body.join('').trim()) blocks.push({ kind: 'code', text: body.join('\n') });
      i = j;
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    const heading = ATX_HEADING.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1].length, text: heading[2] });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      flush();
      blocks.push({ kind: 'list_item', text: item[1] });
      continue;
    }
    // A line right under a list item that is indented continues that item.
    const last = blocks[blocks.length - 1];
    if (!paragraph.length && last?.kind === 'list_item' && /^[ \t]+\S/.test(line) && lines[i - 1]?.trim()) {
      last.text += ` ${line.trim()}`;
      continue;
    }
    paragraph.push(line);
  }
  flush();
  return { blocks };
}
