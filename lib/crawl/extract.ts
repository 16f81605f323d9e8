import { TextDecoder } from 'node:util';

import { defaultTreeAdapter, parse, type DefaultTreeAdapterMap, type TreeAdapter } from 'parse5';
import type { Block } from '../knowledge/document';

/**
 * Turns an HTML page into readable text for the knowledge base, plus the links a crawler may follow.
 *
 * A real HTML parser (parse5, the WHATWG algorithm) builds the tree, so malformed markup, entities, `<script>` bodies
 * and comments are handled exactly as a browser would. The tree is walked without recursion: a hostile page of
 * 100 000 nested `<div>`s must not overflow the stack.
 */

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];

export interface ExtractedPage {
  /** `<title>`, else the first `<h1>`; whitespace collapsed; '' when neither has text. */
  title: string;
  /** Readable text: one line per block, heading or list item; whitespace collapsed; '' when nothing is left. */
  text: string;
  /**
   * The same lines with their structure, for the splitter (lib/knowledge/chunk.ts): headings with their level, list
   * items, table rows with their cells and header, preformatted text; every other line is a paragraph.
   */
  blocks: Block[];
  /** Absolute http(s) URLs of `<a href>` (including navigation), fragments removed, nofollow skipped, deduplicated. */
  links: string[];
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';

// Never content: code, styling, embedded documents, controls, media fallbacks and page chrome.
const DROPPED_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'audio',
  'video',
  'nav',
  'aside',
  'form',
  'button',
  'select',
  'textarea',
  'input',
  'dialog',
  'head',
]);
// ARIA roles of page chrome (what nav/header/footer/aside map to, on elements that are not those tags).
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search']);
// header/footer are the page's banner/contentinfo only outside sectioning content (HTML-AAM); inside an article or
// section they carry the article's own heading or byline, which is content.
const SECTIONING = new Set(['article', 'section', 'main']);
// Everything not listed here starts a new line, so unknown and custom elements never glue words together.
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
const CELL_TAGS = new Set(['td', 'th']);
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

function attr(el: Element, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name && !a.namespace)?.value;
}

function collapse(s: string): string {
  // \s also covers NBSP and the other Unicode spaces, which read as plain spaces in extracted text.
  return s.replace(/\s+/g, ' ').trim();
}

function isHidden(el: Element): boolean {
  const hidden = attr(el, 'hidden');
  // hidden=until-found is content the browser reveals on find-in-page: it is meant to be read.
  if (hidden !== undefined && hidden.trim().toLowerCase() !== 'until-found') return true;
  if (attr(el, 'aria-hidden')?.trim().toLowerCase() === 'true') return true;
  const style = attr(el, 'style');
  return style !== undefined && HIDDEN_STYLE.test(style);
}

function hasDroppedRole(el: Element): boolean {
  const role = attr(el, 'role');
  return (
    role !== undefined &&
    role
      .toLowerCase()
      .split(/\s+/)
      .some((r) => DROPPED_ROLES.has(r))
  );
}

/** Whether an element and everything inside it is left out of the text. */
function isDropped(el: Element, inSection: boolean): boolean {
  if (el.namespaceURI !== HTML_NS) return el.tagName === 'svg' || el.tagName === 'math';
  if (DROPPED_TAGS.has(el.tagName)) return true;
  if (!inSection && (el.tagName === 'header' || el.tagName === 'footer')) return true;
  return hasDroppedRole(el) || isHidden(el);
}

function isMainLike(el: Element): boolean {
  return el.tagName === 'main' || attr(el, 'role')?.toLowerCase().split(/\s+/).includes('main') === true;
}

/** Depth-first, document order, without recursion; `visit` returning false skips the element's subtree. */
function walk(root: ParentNode, visit: (el: Element) => boolean): void {
  const stack: Node[] = [...root.childNodes].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (!visit(node)) continue;
    for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]);
  }
}

function findFirst(root: ParentNode, pred: (el: Element) => boolean): Element | undefined {
  let found: Element | undefined;
  walk(root, (el) => {
    if (found) return false;
    if (pred(el)) found = el;
    return !found;
  });
  return found;
}

/** Plain text content (for titles): every descendant text node, collapsed. */
function textContent(el: Element): string {
  const parts: string[] = [];
  const stack: Node[] = [el];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.nodeName === '#text') parts.push((node as DefaultTreeAdapterMap['textNode']).value);
    else if ('childNodes' in node) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]);
  }
  return collapse(parts.join(''));
}

/** What kind of line an element's text makes (the innermost block element that holds it decides). */
type LineKind = { kind: 'paragraph' } | { kind: 'heading'; level: number } | { kind: 'list_item' } | { kind: 'code' };

const HEADING_TAG = /^h([1-6])$/;

function lineKindOf(tag: string): LineKind | undefined {
  const heading = HEADING_TAG.exec(tag);
  if (heading) return { kind: 'heading', level: Number(heading[1]) };
  if (tag === 'li' || tag === 'dt' || tag === 'dd') return { kind: 'list_item' };
  if (tag === 'pre' || tag === 'listing') return { kind: 'code' };
  if (tag === 'p' || tag === 'div' || tag === 'blockquote') return { kind: 'paragraph' };
  return undefined;
}

/** Collects lines: inline text accumulates, block boundaries and `<br>` end the current line. */
class LineWriter {
  readonly lines: string[] = [];
  readonly blocks: Block[] = [];
  private current = '';
  private cells: string[] = [];
  private cellStart = -1;
  /** The kinds of the open block elements; the innermost one names a line ended inside it. */
  readonly kinds: LineKind[] = [{ kind: 'paragraph' }];
  /** The open tables, each with its header (a row of `<th>` cells) once one is read. */
  private tables: { header?: string[]; rows: number }[] = [];
  /** Open table cells: inside one, block elements do not end the line (a Word table wraps each cell in `<p>`). */
  cellDepth = 0;
  private rowHeaderOnly = true;

  text(s: string): void {
    this.current += s;
  }

  cell(header: boolean): void {
    // Table cells of one row stay on one line, separated so values do not run together.
    this.endCell();
    if (this.cells.length > 0) this.current += ' | ';
    this.cellStart = this.current.length;
    if (!header) this.rowHeaderOnly = false;
  }

  private endCell(): void {
    if (this.cellStart < 0) return;
    this.cells.push(collapse(this.current.slice(this.cellStart)));
    this.cellStart = -1;
  }

  openTable(): void {
    this.tables.push({ rows: 0 });
  }

  closeTable(): void {
    this.tables.pop();
  }

  newline(): void {
    this.endCell();
    const line = collapse(this.current);
    if (line) {
      this.lines.push(line);
      const table = this.tables[this.tables.length - 1];
      if (this.cells.length > 0 && table) {
        const cells = this.cells;
        // A row of header cells names the columns of the rows after it. A table without any (a Word table whose
        // header row is not marked as one) has none: its first row may be data (a two-column list of properties).
        if (this.rowHeaderOnly) table.header = cells;
        else this.blocks.push({ kind: 'table_row', cells, ...(table.header ? { header: table.header } : {}) });
        table.rows++;
      } else {
        const kind = this.kinds[this.kinds.length - 1];
        this.blocks.push(
          kind.kind === 'heading'
            ? { kind: 'heading', level: kind.level, text: line }
            : { kind: kind.kind, text: line },
        );
      }
    }
    this.current = '';
    this.cells = [];
    this.cellStart = -1;
    this.rowHeaderOnly = true;
  }
}

type Frame =
  | { kind: 'node'; node: Node; inSection: boolean; inPre: boolean }
  | { kind: 'end'; block: boolean; lineKind?: boolean; table?: boolean; cell?: boolean };

/** Renders the text of `roots` (in order) into lines, and the same lines as blocks. */
function renderText(roots: { el: ParentNode; inSection: boolean }[]): { text: string; blocks: Block[] } {
  const out = new LineWriter();
  const stack: Frame[] = [];
  for (let r = roots.length - 1; r >= 0; r--) {
    const { el, inSection } = roots[r];
    stack.push({ kind: 'end', block: true });
    for (let i = el.childNodes.length - 1; i >= 0; i--) {
      stack.push({ kind: 'node', node: el.childNodes[i], inSection, inPre: false });
    }
  }
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.kind === 'end') {
      if (frame.cell) out.cellDepth--;
      if (frame.block && !out.cellDepth) out.newline();
      if (frame.lineKind) out.kinds.pop();
      if (frame.table) out.closeTable();
      continue;
    }
    const { node, inPre } = frame;
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      if (!inPre) out.text(value);
      else {
        // Preformatted text keeps its line breaks (spaces within a line are still collapsed).
        const pieces = value.split('\n');
        pieces.forEach((piece, i) => {
          if (i > 0) out.newline();
          out.text(piece);
        });
      }
      continue;
    }
    if (!isElement(node) || isDropped(node, frame.inSection)) continue;
    const tag = node.tagName;
    if (tag === 'br') {
      if (out.cellDepth) out.text(' ');
      else out.newline();
      continue;
    }
    const cell = CELL_TAGS.has(tag);
    if (cell) {
      // A cell of a table nested in a cell is text of the outer cell.
      if (!out.cellDepth) out.cell(tag === 'th');
      else out.text(' ');
      out.cellDepth++;
    }
    const block = !INLINE_TAGS.has(tag) && !cell;
    if (block) {
      if (out.cellDepth) out.text(' ');
      else out.newline();
    }
    const lineKind = block && !out.cellDepth ? lineKindOf(tag) : undefined;
    if (lineKind) out.kinds.push(lineKind);
    const table = tag === 'table' && !out.cellDepth;
    if (table) out.openTable();
    stack.push({ kind: 'end', block, lineKind: Boolean(lineKind), table, cell });
    const inSection = frame.inSection || SECTIONING.has(tag);
    const childPre = inPre || tag === 'pre' || tag === 'listing';
    for (let i = node.childNodes.length - 1; i >= 0; i--) {
      stack.push({ kind: 'node', node: node.childNodes[i], inSection, inPre: childPre });
    }
  }
  out.newline();
  return { text: out.lines.join('\n'), blocks: out.blocks };
}

/**
 * The elements whose text is the page's content: every outermost visible `<main>` (or role=main), else every
 * outermost visible `<article>`, else `<body>`.
 */
function contentRoots(doc: DefaultTreeAdapterMap['document']): Element[] {
  const collect = (pred: (el: Element) => boolean): Element[] => {
    const found: Element[] = [];
    const sectionDepth = new Map<Element, boolean>();
    walk(doc, (el) => {
      const parent = el.parentNode && isElement(el.parentNode) ? el.parentNode : undefined;
      const inSection = parent ? (sectionDepth.get(parent) ?? false) : false;
      if (isDropped(el, inSection)) return false;
      if (pred(el)) {
        found.push(el);
        return false;
      }
      sectionDepth.set(el, inSection || SECTIONING.has(el.tagName));
      return true;
    });
    return found;
  };
  const mains = collect((el) => el.namespaceURI === HTML_NS && isMainLike(el));
  if (mains.length > 0) return mains;
  return collect((el) => el.namespaceURI === HTML_NS && el.tagName === 'article');
}

function resolveHttp(href: string, base: URL | string): URL | undefined {
  try {
    const url = new URL(href.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.hash = '';
    return url;
  } catch {
    return undefined;
  }
}

/**
 * Open elements beyond which parsing stops (what was parsed so far is kept). parse5's scope checks walk the stack
 * of open elements, so 400 000 nested `<div>`s (2 MiB) would take many minutes of CPU; browsers cap the depth too
 * (Blink at 512). Real pages stay far below this.
 */
export const MAX_DEPTH = 512;

class TooDeep extends Error {}

/** parse5 with a depth cap: stops at MAX_DEPTH open elements and returns the document built up to there. */
function parseCapped(html: string): DefaultTreeAdapterMap['document'] {
  let doc: DefaultTreeAdapterMap['document'] | undefined;
  let depth = 0;
  const treeAdapter: TreeAdapter<DefaultTreeAdapterMap> = {
    ...defaultTreeAdapter,
    createDocument() {
      doc = defaultTreeAdapter.createDocument();
      return doc;
    },
    onItemPush() {
      if (++depth > MAX_DEPTH) throw new TooDeep();
    },
    onItemPop() {
      depth--;
    },
  };
  try {
    return parse(html, { treeAdapter });
  } catch (err) {
    if (err instanceof TooDeep && doc) return doc;
    throw err;
  }
}

export function extractPage(html: string, baseUrl: string): ExtractedPage {
  const doc = parseCapped(html);
  const htmlEl = (el: Element) => el.namespaceURI === HTML_NS;

  // Only the first <base href> counts (HTML spec); a broken one leaves the page URL in force.
  const baseEl = findFirst(doc, (el) => htmlEl(el) && el.tagName === 'base' && attr(el, 'href') !== undefined);
  const base = (baseEl && resolveHttp(attr(baseEl, 'href')!, baseUrl)?.href) || baseUrl;

  const titleEl = findFirst(doc, (el) => htmlEl(el) && el.tagName === 'title');
  let title = titleEl ? textContent(titleEl) : '';
  if (!title) {
    const h1 = findFirst(doc, (el) => htmlEl(el) && el.tagName === 'h1');
    title = h1 ? textContent(h1) : '';
  }

  const body = findFirst(doc, (el) => htmlEl(el) && el.tagName === 'body');
  const roots = contentRoots(doc);
  let rendered = roots.length > 0 ? renderText(roots.map((el) => ({ el, inSection: true }))) : undefined;
  // An empty <main> (say, filled by JavaScript) should not hide text the page does have elsewhere.
  if (!rendered?.text && body) rendered = renderText([{ el: body, inSection: false }]);
  const { text, blocks } = rendered ?? { text: '', blocks: [] };

  // Links come from the whole document, navigation included: that is how a site links its pages together.
  const links: string[] = [];
  const seen = new Set<string>();
  walk(doc, (el) => {
    if (!htmlEl(el) || el.tagName !== 'a') return true;
    const href = attr(el, 'href');
    const rel = attr(el, 'rel')?.toLowerCase().split(/\s+/) ?? [];
    if (href === undefined || rel.includes('nofollow')) return true;
    const url = resolveHttp(href, base);
    if (url && !seen.has(url.href)) {
      seen.add(url.href);
      links.push(url.href);
    }
    return true;
  });

  return { title, text, blocks, links };
}

// ---------------------------------------------------------------------------------------------------------------
// Bytes to text
// ---------------------------------------------------------------------------------------------------------------

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
 * uses, rather than the spec's legacy windows-1252 default).
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
