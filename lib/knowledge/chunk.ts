/**
 * Splits a knowledge text into retrieval fragments: about `target` characters, never more than `max`, cut at the
 * strongest boundary available in the [min, max] window — paragraph, then line, then sentence, then space — and
 * never inside a word. Scripts without spaces (Chinese, Japanese, Thai) fall back to the ICU word segmenter, and a
 * single "word" longer than `max` (a base64 blob) is cut between characters. A fragment cut mid-paragraph repeats
 * the tail of the previous one (at most `overlap` characters, from a sentence or word start), so a fact that
 * straddles the cut is still whole in one fragment.
 */

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
