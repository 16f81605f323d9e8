import { TextDecoder } from 'node:util';

import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { defaultTreeAdapter, parse, serialize, type DefaultTreeAdapterMap, type TreeAdapter } from 'parse5';
import type { Block } from '../knowledge/document';

/**
 * Turns an HTML page into readable text for the knowledge base, plus the links a crawler may follow
 * (docs/decisions/readability-and-robots-parser.md).
 *
 * - parse5 (the WHATWG algorithm, as browsers parse) builds the tree, capped in depth; linkedom gives it the DOM that
 *   Mozilla's Readability (Firefox's Reader View) needs to find the main content.
 * - A page Readability refuses (under its 500 characters of article text: short pages, link lists) keeps its
 *   `<main>` (else its `<article>`s, else its body) without navigation, header, footer, aside, forms and hidden parts.
 * - The content keeps its structure: `blocks` (headings with their level, paragraphs, list items, table rows with
 *   their header, code), and `text` renders them as plain Markdown-like text (`#` headings, `- ` items, blank lines
 *   between paragraphs, one line per table row), which the knowledge splitter reads.
 * - Walks are iterative: a hostile page of nested elements must not overflow the stack.
 */

/** The page's blocks are the knowledge base's document blocks (lib/knowledge/document.ts), without pages. */
export type PageBlock = Block;

export interface ExtractedPage {
  /** `<title>`, else the first `<h1>`; whitespace collapsed; '' when neither has text. */
  title: string;
  /** The main content as Markdown-like text (see `renderBlocks`); '' when nothing is left. */
  text: string;
  /** The same content with its structure. */
  blocks: PageBlock[];
  /** Absolute http(s) URLs of `<a href>` (including navigation), fragments removed, nofollow skipped, deduplicated. */
  links: string[];
}

/**
 * Open elements beyond which parsing stops (what was parsed so far is kept). Real pages stay far below it (the deepest
 * of 311 real pages measured was 50); Readability's scoring grows steeply with depth (one 512-deep chain took it
 * 6 s), so the cap is lower than a browser's (Blink: 512).
 */
export const MAX_DEPTH = 256;
/**
 * Readability is not run on pages with more elements than this (the largest of the 311 real pages had about 10 000);
 * they keep the fallback. Bounds its time on a hostile page to a few seconds.
 */
export const READABILITY_MAX_ELEMENTS = 20_000;
/** Readability's own threshold: article text shorter than this means it found no article. */
const ARTICLE_MIN_CHARS = 500;

// --- A small structural view of the DOM that linkedom builds (the project compiles without the DOM library) ---

interface DomNode {
  nodeType: number;
  nodeValue: string | null;
  childNodes: ArrayLike<DomNode>;
  parentNode: DomNode | null;
}
interface DomElement extends DomNode {
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
  closest(selectors: string): DomElement | null;
  /** Set by Readability on the tables it judged to hold data (not layout). */
  _readabilityDataTable?: boolean;
}
interface DomDocument {
  body: DomElement | null;
  documentElement: DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const HTML_NS = 'http://www.w3.org/1999/xhtml';

// Never content: code, styling, embedded documents, controls and media.
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
  'form',
  'button',
  'select',
  'textarea',
  'input',
  'dialog',
  'head',
  'nav',
  'aside',
]);
// ARIA roles of page chrome (what nav/header/footer/aside map to, on elements that are not those tags).
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search']);
// header/footer are the page's banner/contentinfo only outside sectioning content (HTML-AAM); inside an article or
// section they carry the article's own heading or byline, which is content.
const SECTIONING = new Set(['article', 'section', 'main']);
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
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;
const HEADING = /^h([1-6])$/;

function collapse(s: string): string {
  // \s also covers NBSP and the other Unicode spaces, which read as plain spaces in extracted text.
  return s.replace(/\s+/g, ' ').trim();
}

function isHidden(el: DomElement): boolean {
  const hidden = el.getAttribute('hidden');
  // hidden=until-found is content the browser reveals on find-in-page: it is meant to be read.
  if (hidden !== null && hidden.trim().toLowerCase() !== 'until-found') return true;
  if (el.getAttribute('aria-hidden')?.trim().toLowerCase() === 'true') return true;
  const style = el.getAttribute('style');
  return style !== null && HIDDEN_STYLE.test(style);
}

/** Whether an element and everything inside it is left out of the text. */
function isDropped(el: DomElement, inSection: boolean): boolean {
  if (el.namespaceURI !== null && el.namespaceURI !== HTML_NS) return true; // SVG, MathML
  const tag = el.localName;
  if (DROPPED_TAGS.has(tag)) return true;
  if (!inSection && (tag === 'header' || tag === 'footer')) return true;
  const role = el.getAttribute('role');
  if (
    role &&
    role
      .toLowerCase()
      .split(/\s+/)
      .some((r) => DROPPED_ROLES.has(r))
  )
    return true;
  return isHidden(el);
}

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
function renderRoots(roots: DomElement[], inSection: boolean): PageBlock[] {
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

// --- Parsing -------------------------------------------------------------------------------------------------------

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

/**
 * The page as a DOM: parse5's tree serialized and read by linkedom. parse5 decides the structure (implied
 * `<html>`/`<body>`, misnested tags, the depth cap); linkedom's own parser would mis-nest fragments and is not capped.
 */
function domOf(wellFormed: string): DomDocument {
  return (parseHTML(wellFormed) as unknown as { document: DomDocument }).document;
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

function htmlElements(doc: DomDocument, selector: string): DomElement[] {
  return Array.from(doc.querySelectorAll(selector)).filter(
    (el) => el.namespaceURI === null || el.namespaceURI === HTML_NS,
  );
}

/** The article Readability finds, or undefined when it finds none (or the page is too large to give it). */
function readabilityArticle(doc: DomDocument): DomElement | undefined {
  try {
    const reader = new Readability<DomElement>(doc as never, {
      charThreshold: ARTICLE_MIN_CHARS,
      maxElemsToParse: READABILITY_MAX_ELEMENTS,
      serializer: (node) => node as unknown as DomElement,
    });
    const article = reader.parse();
    if (!article?.content || (article.length ?? 0) < ARTICLE_MIN_CHARS) return undefined;
    return article.content;
  } catch {
    return undefined; // over maxElemsToParse (Readability throws), or a document it cannot handle
  }
}

/** Without an article: every outermost visible `<main>` (or role=main), else every `<article>`, else the body. */
function fallbackBlocks(doc: DomDocument): PageBlock[] {
  const outermost = (els: DomElement[]) =>
    els.filter((el) => !els.some((other) => other !== el && isInside(el, other)) && !hasDroppedAncestor(el));
  for (const selector of ['main, [role~="main" i]', 'article']) {
    const roots = outermost(htmlElements(doc, selector));
    const blocks = roots.length ? renderRoots(roots, true) : [];
    // An empty <main> (say, filled by JavaScript) should not hide text the page does have elsewhere.
    if (blocks.length) return blocks;
  }
  return doc.body ? renderRoots([doc.body], false) : [];
}

function isInside(el: DomNode, ancestor: DomNode): boolean {
  for (let p = el.parentNode; p; p = p.parentNode) if (p === ancestor) return true;
  return false;
}

function hasDroppedAncestor(el: DomElement): boolean {
  for (let node: DomElement | null = el; node && node.nodeType === ELEMENT_NODE; node = node.parentNode as DomElement) {
    if (isDropped(node, true)) return true;
  }
  return false;
}

/**
 * `whole`: the document is all content (an uploaded HTML export or a Word file converted to HTML), so it is read whole,
 * its body's text in order, instead of looking for a page's main content among menus and sidebars.
 */
export function extractPage(html: string, baseUrl: string, opts: { whole?: boolean } = {}): ExtractedPage {
  const wellFormed = serialize(parseCapped(html));
  const doc = domOf(wellFormed);

  // Only the first <base href> counts (HTML spec); a broken one leaves the page URL in force.
  const baseEl = htmlElements(doc, 'base[href]')[0];
  const base = (baseEl && resolveHttp(baseEl.getAttribute('href') ?? '', baseUrl)?.href) || baseUrl;

  let title = collapse(htmlElements(doc, 'title').find((el) => !el.closest('svg, math'))?.textContent ?? '');
  if (!title) title = collapse(htmlElements(doc, 'h1')[0]?.textContent ?? '');

  // Links come from the whole document, navigation included: that is how a site links its pages together.
  const links: string[] = [];
  const seen = new Set<string>();
  for (const a of htmlElements(doc, 'a[href]')) {
    const rel = a.getAttribute('rel')?.toLowerCase().split(/\s+/) ?? [];
    if (rel.includes('nofollow')) continue;
    const url = resolveHttp(a.getAttribute('href') ?? '', base);
    if (url && !seen.has(url.href)) {
      seen.add(url.href);
      links.push(url.href);
    }
  }

  if (opts.whole) {
    const blocks = doc.body ? renderRoots([doc.body], false) : [];
    return { title, text: renderBlocks(blocks), blocks, links };
  }
  // Readability changes the document it reads: the fallback reads a fresh copy.
  const article = readabilityArticle(doc);
  let blocks = article ? renderRoots([article], true) : [];
  if (blocks.length === 0) blocks = fallbackBlocks(domOf(wellFormed));
  return { title, text: renderBlocks(blocks), blocks, links };
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
