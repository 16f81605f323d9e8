/**
 * The part of a parsed page that the extractor reads (lib/crawl/extract.ts): a small structural view of the DOM that
 * linkedom builds (the project compiles without the DOM library), and which of its elements are never content.
 */

export interface DomNode {
  nodeType: number;
  nodeValue: string | null;
  childNodes: ArrayLike<DomNode>;
  parentNode: DomNode | null;
}
export interface DomElement extends DomNode {
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
  closest(selectors: string): DomElement | null;
  /** Set by Readability on the tables it judged to hold data (not layout). */
  _readabilityDataTable?: boolean;
}
export interface DomDocument {
  body: DomElement | null;
  documentElement: DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
}

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const HTML_NS = 'http://www.w3.org/1999/xhtml';

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
export const SECTIONING = new Set(['article', 'section', 'main']);

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

export function collapse(s: string): string {
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
export function isDropped(el: DomElement, inSection: boolean): boolean {
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
