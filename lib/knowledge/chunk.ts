/**
 * Splits a knowledge text into retrieval fragments: about `target` characters, never more than `max`, cut at the
 * strongest boundary available in the [min, max] window — paragraph, then line, then sentence, then space — and
 * never inside a word. Scripts without spaces (Chinese, Japanese, Thai) fall back to the ICU word segmenter, and a
 * single "word" longer than `max` (a base64 blob) is cut between characters. A fragment cut mid-paragraph repeats
 * the tail of the previous one (at most `overlap` characters, from a sentence or word start), so a fact that
 * straddles the cut is still whole in one fragment.
 */

import { type Block, type DocumentModel, blockText, clampLevel, hasText, readPlainText } from './document';

export interface ChunkOptions {
  min?: number;
  target?: number;
  max?: number;
  overlap?: number;
}

export const CHUNK_DEFAULTS = { min: 800, target: 1000, max: 1200, overlap: 150 } as const;

const Strength = { None: -1, Char: 0, Word: 1, Space: 2, Sentence: 3, Line: 4, Paragraph: 5 } as const;
type Strength = (typeof Strength)[keyof typeof Strength];

// A break position is where a fragment ends (exclusive); the next one starts there, after any whitespace.
const BREAKS: { strength: Strength; re: RegExp; at: 'start' | 'end' }[] = [
  { strength: Strength.Paragraph, re: /\n[ \t]*\n/g, at: 'start' },
  { strength: Strength.Line, re: /\n/g, at: 'start' },
  // Terminal punctuation (and closing quotes or brackets) followed by a space; CJK terminators need no space.
  { strength: Strength.Sentence, re: /[.!?…]+['"’”»)\]]*(?=\s)|[。！？]+[」』）”]*/gu, at: 'end' },
  { strength: Strength.Space, re: /\s/g, at: 'start' },
];

// ICU segmentation is quadratic in the length of the string it is given (V8), so it only ever sees one window.
const SEGMENT_CONTEXT = 32;
let wordSegmenter: Intl.Segmenter | undefined;

function candidates(text: string, lo: number, hi: number, strength: Strength): number[] {
  if (strength === Strength.Word) {
    wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
    const from = Math.max(0, lo - SEGMENT_CONTEXT);
    const slice = text.slice(from, Math.min(text.length, hi + SEGMENT_CONTEXT));
    const out: number[] = [];
    for (const { index } of wordSegmenter.segment(slice)) {
      const at = from + index;
      // The slice's own edges are not real boundaries.
      if (index > 0 && at >= lo && at <= hi) out.push(at);
    }
    return out;
  }
  const def = BREAKS.find((b) => b.strength === strength)!;
  // Only the window (plus a little context either side) is searched, so chunking stays linear in the text.
  const from = Math.max(0, lo - 8);
  const slice = text.slice(from, Math.min(text.length, hi + 2));
  const out: number[] = [];
  for (const m of slice.matchAll(def.re)) {
    const at = from + (def.at === 'start' ? m.index : m.index + m[0].length);
    if (at >= lo && at <= hi) out.push(at);
  }
  return out;
}

/** The strongest break in [lo, hi], the one closest to `target` among equals. */
function bestBreak(text: string, lo: number, hi: number, target: number): { at: number; strength: Strength } {
  for (const s of [Strength.Paragraph, Strength.Line, Strength.Sentence, Strength.Space, Strength.Word]) {
    const found = candidates(text, lo, hi, s);
    if (!found.length) continue;
    let best = found[0];
    for (const at of found) if (Math.abs(at - target) < Math.abs(best - target)) best = at;
    return { at: best, strength: s };
  }
  return { at: -1, strength: Strength.None };
}

/** A cut between characters: not inside a surrogate pair, not before a combining mark. */
function charBoundary(text: string, at: number, floor: number): number {
  let i = at;
  while (i > floor + 1) {
    const code = text.charCodeAt(i);
    const lowSurrogate = code >= 0xdc00 && code <= 0xdfff;
    if (!lowSurrogate && !/\p{M}/u.test(text[i])) break;
    i--;
  }
  return i;
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

/** Line endings unified, trailing spaces dropped, runs of blank lines collapsed to one. */
export function cleanText(text: string): string {
  return text
    .replace(/\u0000/g, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}

export function chunkText(text: string, options: ChunkOptions = {}): string[] {
  const { min, target, max, overlap } = { ...CHUNK_DEFAULTS, ...options };
  if (!(min > overlap && target >= min && max >= target)) {
    throw new RangeError('chunkText: need overlap < min <= target <= max');
  }
  const clean = cleanText(text);
  const out: string[] = [];
  const push = (piece: string) => {
    const trimmed = piece.trim();
    if (trimmed) out.push(trimmed);
  };

  let start = skipSpace(clean, 0);
  while (start < clean.length) {
    const rest = clean.length - start;
    if (rest <= max) {
      push(clean.slice(start));
      break;
    }
    // Near the end, split what is left into two even parts rather than leave a scrap.
    const aim = start + (rest < 2 * target ? Math.max(min, Math.ceil(rest / 2)) : target);
    let { at: end, strength } = bestBreak(clean, start + min, start + max, aim);
    if (end < 0) {
      end = charBoundary(clean, start + max, start);
      strength = Strength.Char;
    }
    push(clean.slice(start, end));

    let next = end;
    if (strength < Strength.Paragraph && overlap > 0) {
      // The earliest sentence (else word) start within `overlap` of the cut: the longest overlap that fits.
      const lo = Math.max(start + 1, end - overlap);
      for (const s of [Strength.Sentence, Strength.Space, Strength.Word]) {
        const found = candidates(clean, lo, end - 1, s);
        if (found.length) {
          next = found[0];
          break;
        }
      }
    }
    start = skipSpace(clean, next);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Passages: documents split on their structure
// ---------------------------------------------------------------------------------------------------------------

/** A retrieval passage: its text, the headings it sits under (outermost first) and, for paged formats, its page. */
export interface SplitPassage {
  text: string;
  headingPath: string[];
  page?: number;
}

export interface PassageOptions {
  /** A passage is filled up to about this many characters… */
  target?: number;
  /** …and may grow to this many to keep a block whole; a longer block is cut with `chunkText`. */
  max?: number;
  /** Below this, a passage takes the next block even past `target` (while it stays under `max`). */
  min?: number;
  /** The overlap `chunkText` repeats when it must cut inside one long block. */
  overlap?: number;
}

/**
 * Chosen by measurement (docs/decisions/146-passages-keep-context.md, `bench/passage-size.ts`): on long documents, the best
 * five passages found more relevant sections as passages grew to about 1000 characters, and little more beyond
 * (recall@5 0.30 at 500, 0.36 at 1000, 0.37 at 1500) while what the model reads kept growing (+25 %).
 */
export const PASSAGE_DEFAULTS = { min: 600, target: 1000, max: 1400, overlap: 100 } as const;

/** Items of one list, rows of one table and lines of one code block sit on consecutive lines of a passage. */
const TIGHT_KINDS = new Set<Block['kind']>(['list_item', 'table_row', 'code']);
/** Headings kept in a path; deeper ones still start sections but are not repeated in every passage. */
const MAX_PATH = 6;
/** A heading's text in a path is cut here: a "heading" that is a whole paragraph (a bad PDF) must not flood it. */
const HEADING_CHARS = 200;

function shortHeading(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= HEADING_CHARS ? line : `${line.slice(0, HEADING_CHARS - 1)}…`;
}

/**
 * Splits a document into passages on its structure (docs/decisions/146-passages-keep-context.md):
 * - a heading starts a section, and a passage never holds text of two sections (nor of two pages);
 * - within a section, whole blocks (paragraphs, list items, table rows, code) are gathered up to `target`
 *   characters, or up to `max` while the passage is still under `min`; a block is never cut while it fits in `max`;
 * - a block longer than `max` is cut by `chunkText` (never inside a word, CJK and long blobs handled there);
 * - each passage carries its heading path (outermost first) and its page; a heading with nothing under it (before
 *   the next heading of its level or above) is a passage of its own, so its words are not lost.
 */
export function splitDocument(doc: DocumentModel, options: PassageOptions = {}): SplitPassage[] {
  const { min, target, max, overlap } = { ...PASSAGE_DEFAULTS, ...options };
  if (!(min > overlap && target >= min && max >= target)) {
    throw new RangeError('splitDocument: need overlap < min <= target <= max');
  }
  const out: SplitPassage[] = [];
  const stack: { level: number; text: string }[] = [];
  const path = () => stack.slice(-MAX_PATH).map((h) => h.text);

  let parts: string[] = [];
  let length = 0;
  let page: number | undefined;
  let lastKind: Block['kind'] | undefined;
  // The innermost heading, until something is written under it.
  let bareHeading: { level: number; path: string[]; page?: number } | undefined;

  const flush = () => {
    const text = cleanText(parts.join('')).trim();
    if (text) out.push({ text, headingPath: path(), ...(page !== undefined ? { page } : {}) });
    parts = [];
    length = 0;
    lastKind = undefined;
  };
  const emitBare = () => {
    if (!bareHeading) return;
    const { path: p, page: at } = bareHeading;
    out.push({ text: p[p.length - 1], headingPath: p, ...(at !== undefined ? { page: at } : {}) });
    bareHeading = undefined;
  };

  for (const block of doc.blocks) {
    if (!hasText(block)) continue;
    if (block.kind === 'heading') {
      flush();
      const level = clampLevel(block.level);
      if (bareHeading && level <= bareHeading.level) emitBare();
      bareHeading = undefined;
      while (stack.length && stack[stack.length - 1].level >= level) stack.pop();
      stack.push({ level, text: shortHeading(block.text) });
      bareHeading = { level, path: path(), page: block.page };
      continue;
    }
    bareHeading = undefined;
    if (length && block.page !== page) flush();
    if (!length) page = block.page;

    const text = blockText(block);
    if (text.length > max) {
      flush();
      page = block.page;
      for (const piece of chunkText(text, { min, target, max, overlap })) {
        out.push({ text: piece, headingPath: path(), ...(page !== undefined ? { page } : {}) });
      }
      continue;
    }
    // Items of one list and rows of one table sit on consecutive lines; other blocks are paragraphs.
    const tight = lastKind === block.kind && TIGHT_KINDS.has(block.kind);
    const sep = !length ? '' : tight ? '\n' : '\n\n';
    const grown = length + sep.length + text.length;
    if (length && grown > target && !(length < min && grown <= max)) {
      flush();
      page = block.page;
      parts.push(text);
      length = text.length;
    } else {
      parts.push(sep, text);
      length = grown;
    }
    lastKind = block.kind;
  }
  flush();
  emitBare();
  return out;
}

/** Pasted text (`POST /v1/api/knowledge`) and scanned pages: read as Markdown-ish plain text, then split alike. */
export function splitText(text: string, options: PassageOptions = {}): SplitPassage[] {
  return splitDocument(readPlainText(cleanText(text)), options);
}
