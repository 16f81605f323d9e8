import type { Block } from '../knowledge/document';
import { type DomElement, type DomNode, ELEMENT_NODE, SECTIONING, TEXT_NODE, collapse, isDropped } from './dom';

/**
 * A page's content as blocks (lib/crawl/extract.ts): headings with their level, paragraphs, list items, table rows with
 * their header, code; and the blocks as the plain Markdown-like text the knowledge splitter reads. Walks are
 * iterative: a hostile page of nested elements must not overflow the stack.
 */

/** The page's blocks are the knowledge base's document blocks (lib/knowledge/document.ts), without pages. */
export type PageBlock = Block;

// Everything not listed here starts a new block, so unknown and custom elements never glue words together.
const INLINE_TAGS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'del',
  'dfn',
  'em',
  'font',
  'i',
  'img',
  'ins',
  'kbd',
  'label',
  'mark',
  'q',
  'ruby',
  'rb',
  'rp',
  'rt',
  's',
  'samp',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'sup',
  'time',
  'tt',
  'u',
  'var',
  'wbr',
]);

const HEADING = /^h([1-6])$/;

// --- Rendering a subtree into blocks -------------------------------------------------------------------------------

type LineKind = { kind: 'paragraph' } | { kind: 'heading'; level: number } | { kind: 'list_item' } | { kind: 'code' };

function lineKindOf(tag: string): LineKind | undefined {
  const heading = HEADING.exec(tag);
  if (heading) return { kind: 'heading', level: Number(heading[1]) };
  if (tag === 'li' || tag === 'dt' || tag === 'dd') return { kind: 'list_item' };
  if (tag === 'pre' || tag === 'listing') return { kind: 'code' };
  return undefined;
}

/** Collects blocks: inline text accumulates; a block boundary ends the current block, `<br>` its current line. */
class BlockWriter {
  readonly blocks: PageBlock[] = [];
  /** The kinds of the open block elements; the innermost one names the block ended inside it. */
  readonly kinds: LineKind[] = [{ kind: 'paragraph' }];
  /** Open data tables, each with its header once a row of header cells was read. */
  private readonly tables: { header?: string[]; rows: number }[] = [];
  private lines: string[] = [''];
  private cells: string[] = [];
  private headerCellsOnly = true;
  /** Inside a cell, block boundaries are spaces: a cell is one value (a Word table wraps each in `<p>`). */
  cellDepth = 0;

  text(s: string): void {
    this.lines[this.lines.length - 1] += s;
  }

  lineBreak(): void {
    if (this.cellDepth) this.text(' ');
    else this.lines.push('');
  }

  /** Ends the current block (a block element opens or closes). */
  boundary(): void {
    if (this.cellDepth) return this.text(' ');
    const kind = this.kinds[this.kinds.length - 1];
    const lines = this.lines;
    this.lines = [''];
    if (kind.kind === 'code') {
      const text = lines.join('\n').replace(/^\s*\n|\s+$/g, '');
      if (text.trim()) this.blocks.push({ kind: 'code', text });
      return;
    }
    const text = lines.map(collapse).filter(Boolean).join('\n');
    if (!text) return;
    if (kind.kind === 'heading') this.blocks.push({ kind: 'heading', level: kind.level, text: collapse(text) });
    else this.blocks.push({ kind: kind.kind, text });
  }

  openTable(): void {
    this.tables.push({ rows: 0 });
  }

  closeTable(): void {
    const table = this.tables.pop();
    // A table of header cells only is still text.
    if (table?.header && table.rows === 0) this.blocks.push({ kind: 'table_row', cells: table.header });
  }

  openCell(header: boolean): void {
    this.boundary();
    if (!header) this.headerCellsOnly = false;
    this.cellDepth++;
  }

  closeCell(): void {
    this.cellDepth--;
    if (this.cellDepth) return;
    this.cells.push(collapse(this.lines.join(' ')));
    this.lines = [''];
  }

  /** A row ends: a row of header cells names the columns of the rows after it; any other row is a block. */
  closeRow(): void {
    const table = this.tables[this.tables.length - 1];
    const cells = this.cells;
    this.cells = [];
    const headerOnly = this.headerCellsOnly;
    this.headerCellsOnly = true;
    if (!table || !cells.some(Boolean)) return;
    if (headerOnly) table.header = cells;
    else {
      this.blocks.push({ kind: 'table_row', cells, ...(table.header ? { header: table.header } : {}) });
      table.rows++;
    }
  }
}

type EndAction = 'boundary' | 'popKind' | 'table' | 'row' | 'cell';
type Frame = { node: DomNode; inSection: boolean; inPre: boolean } | { end: EndAction[] };

/** Whether a table lays out the page rather than holding data: its cells are then read as ordinary blocks. */
function isLayoutTable(table: DomElement): boolean {
  if (table._readabilityDataTable !== undefined) return !table._readabilityDataTable;
  if (table.getAttribute('role')?.toLowerCase() === 'presentation') return true;
  return table.querySelectorAll('table').length > 0;
}

/** Renders `roots` (in order) into blocks. `inSection`: the roots are content already (header/footer kept). */
export function renderRoots(roots: DomElement[], inSection: boolean): PageBlock[] {
  const out = new BlockWriter();
  const stack: Frame[] = [];
  for (let r = roots.length - 1; r >= 0; r--) {
    stack.push({ end: ['boundary'] });
    pushChildren(stack, roots[r], inSection, false);
  }
  // Per open table: whether it holds data. Rows and cells of layout tables are plain containers.
  const dataTables: boolean[] = [];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if ('end' in frame) {
      for (const action of frame.end) {
        if (action === 'boundary') out.boundary();
        else if (action === 'popKind') out.kinds.pop();
        else if (action === 'cell') out.closeCell();
        else if (action === 'row') out.closeRow();
        else if (dataTables.pop()) out.closeTable();
        else out.boundary();
      }
      continue;
    }
    const { node, inPre } = frame;
    if (node.nodeType === TEXT_NODE) {
      const value = node.nodeValue ?? '';
      if (!inPre) out.text(value);
      else
        value.split('\n').forEach((piece, i) => {
          if (i > 0) out.lineBreak();
          out.text(piece);
        });
      continue;
    }
    if (node.nodeType !== ELEMENT_NODE) continue;
    const el = node as DomElement;
    if (isDropped(el, frame.inSection)) continue;
    const tag = el.localName;
    if (tag === 'br') {
      out.lineBreak();
      continue;
    }
    const inDataTable = dataTables.length > 0 && dataTables[dataTables.length - 1] && !out.cellDepth;
    let end: EndAction[] | undefined;
    if (tag === 'table') {
      const data = !out.cellDepth && !isLayoutTable(el);
      out.boundary();
      dataTables.push(data);
      if (data) out.openTable();
      end = ['table'];
    } else if (tag === 'tr' && inDataTable) {
      out.boundary();
      end = ['row'];
    } else if ((tag === 'td' || tag === 'th') && (inDataTable || out.cellDepth > 0)) {
      // A cell of a table nested in a cell is text of the outer cell.
      if (out.cellDepth) {
        out.text(' ');
        out.cellDepth++;
      } else out.openCell(tag === 'th');
      end = ['cell'];
    } else if (!INLINE_TAGS.has(tag)) {
      out.boundary();
      const kind = out.cellDepth ? undefined : lineKindOf(tag);
      if (kind) out.kinds.push(kind);
      end = kind ? ['boundary', 'popKind'] : ['boundary'];
    }
    if (end) stack.push({ end });
    pushChildren(stack, el, frame.inSection || SECTIONING.has(tag), inPre || tag === 'pre' || tag === 'listing');
  }
  out.boundary();
  return out.blocks;
}

function pushChildren(stack: Frame[], el: DomElement, inSection: boolean, inPre: boolean): void {
  const children = el.childNodes;
  for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], inSection, inPre });
}

// --- Blocks to text ------------------------------------------------------------------------------------------------

/** A table row as one line: `Header: value; …` when its table names the columns, else the cells apart. */
function rowText(block: Extract<PageBlock, { kind: 'table_row' }>): string {
  if (!block.header?.some(Boolean)) return block.cells.filter(Boolean).join(' | ');
  return block.cells
    .map((cell, i) => {
      const name = block.header?.[i] ?? '';
      if (!cell) return '';
      return name && name !== cell ? `${name}: ${cell}` : cell;
    })
    .filter(Boolean)
    .join('; ');
}

/**
 * Blocks as plain Markdown-like text: headings as `#` lines by level, list items as `- ` lines, table rows one line
 * each, code fenced with ```; blank lines between blocks, but none inside a run of list items or of table rows.
 */
export function renderBlocks(blocks: PageBlock[]): string {
  let out = '';
  let previous: PageBlock['kind'] | undefined;
  for (const block of blocks) {
    let line: string;
    if (block.kind === 'heading') line = `${'#'.repeat(Math.min(6, Math.max(1, block.level)))} ${block.text}`;
    else if (block.kind === 'list_item') line = `- ${block.text.replace(/\n/g, ' ')}`;
    else if (block.kind === 'table_row') line = rowText(block);
    else if (block.kind === 'code') line = `\`\`\`\n${block.text}\n\`\`\``;
    else line = block.text;
    if (!line) continue;
    const tight = (block.kind === 'list_item' || block.kind === 'table_row') && previous === block.kind;
    if (out) out += tight ? '\n' : '\n\n';
    out += line;
    previous = block.kind;
  }
  return out;
}
