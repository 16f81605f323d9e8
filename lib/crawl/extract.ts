import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { defaultTreeAdapter, parse, serialize, type DefaultTreeAdapterMap, type TreeAdapter } from 'parse5';
import { type PageBlock, renderBlocks, renderRoots } from './blocks';
import { type DomDocument, type DomElement, type DomNode, ELEMENT_NODE, HTML_NS, collapse, isDropped } from './dom';

// What a fetched page's bytes are, and their text, before they are read here.
export { decodeHtml, isHtml } from './decode';

/**
 * Turns an HTML page into readable text for the knowledge base, plus the links a crawler may follow
 * (docs/decisions/150-readability-and-robots-parser.md). Which elements are never content is ./dom.ts's; rendering
 * content into blocks and text is ./blocks.ts's; a response's bytes become text in ./decode.ts.
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

export type { PageBlock } from './blocks';

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
const READABILITY_MAX_ELEMENTS = 20_000;
/** Readability's own threshold: article text shorter than this means it found no article. */
const ARTICLE_MIN_CHARS = 500;

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
