import { describe, expect, it } from '@jest/globals';
import { CHUNK_DEFAULTS, PASSAGE_DEFAULTS, chunkText, splitDocument, splitText } from '../../lib/knowledge/chunk';
import { type Block, readPlainText } from '../../lib/knowledge/document';
import { searchText } from '../../lib/knowledge/normalize';
import { deriveTitle } from '../../lib/knowledge/store';

const { min, max, overlap } = CHUNK_DEFAULTS;

function sentences(
  n: number,
  make = (i: number) => `Sentence ${i} says something about the purple axolotl and its friends.`,
) {
  return Array.from({ length: n }, (_, i) => make(i));
}

/** Where each fragment sits in the original text (fragments are trimmed slices, in order, possibly overlapping). */
function offsets(text: string, fragments: string[]): { start: number; end: number }[] {
  let from = 0;
  return fragments.map((f) => {
    const start = text.indexOf(f, from);
    expect(start).toBeGreaterThanOrEqual(0);
    from = start + 1;
    return { start, end: start + f.length };
  });
}

/** Every offset where the ICU word segmenter (or the text's edges) allows a cut. */
function wordBoundaries(text: string): Set<number> {
  const out = new Set([0, text.length]);
  for (const { index } of new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text)) out.add(index);
  return out;
}

describe('chunkText', () => {
  it('keeps a short text whole, trimmed, and gives nothing for blank text', () => {
    expect(chunkText('  The mascot is Quentin.\n')).toEqual(['The mascot is Quentin.']);
    expect(chunkText(' \n\t\n ')).toEqual([]);
    expect(chunkText('')).toEqual([]);
  });

  it('cuts English prose at sentence ends into fragments of 800–1200 characters', () => {
    const text = sentences(80).join(' ');
    const fragments = chunkText(text);
    expect(fragments.length).toBeGreaterThan(4);
    fragments.forEach((f, i) => {
      expect(f.length).toBeLessThanOrEqual(max);
      if (i < fragments.length - 1) expect(f.length).toBeGreaterThanOrEqual(min);
      expect(f).toMatch(/^Sentence \d+/); // starts at a sentence (the overlap starts at one too)
      expect(f).toMatch(/friends\.$/); // ends at one
    });
  });

  it('loses nothing: every sentence is whole in some fragment, in order', () => {
    const all = sentences(80);
    const fragments = chunkText(all.join(' '));
    for (const s of all) expect(fragments.some((f) => f.includes(s))).toBe(true);
    offsets(all.join(' '), fragments); // each fragment is a slice of the text, in order
  });

  it('repeats at most a short tail of the previous fragment when it cuts inside a paragraph', () => {
    const text = sentences(80).join(' ');
    const spans = offsets(text, chunkText(text));
    for (let i = 1; i < spans.length; i++) {
      const shared = spans[i - 1].end - spans[i].start;
      expect(shared).toBeGreaterThan(0);
      expect(shared).toBeLessThanOrEqual(overlap);
    }
  });

  it('prefers paragraph breaks, and does not overlap across them', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) =>
      sentences(6, (i) => `Paragraph ${p} line ${i} is here.`).join(' '),
    );
    const text = paragraphs.join('\n\n');
    const fragments = chunkText(text);
    for (const f of fragments) {
      expect(f).toMatch(/^Paragraph \d+ line 0 /);
      expect(f).toMatch(/line 5 is here\.$/);
    }
    const joined = fragments.join('\n\n');
    expect(joined).toBe(text); // whole paragraphs, none repeated
  });

  it('never cuts inside a word, whatever the script', () => {
    const texts = [
      sentences(60).join(' '),
      Array.from({ length: 400 }, (_, i) => `слово${i}`).join(' '), // Cyrillic, no sentence ends
      '会社のマスコットは紫のウーパールーパーです'.repeat(150), // Japanese: no spaces, no sentence ends
      'บริษัทของเรามีมาสคอตเป็นแอกโซลอเติลสีม่วง'.repeat(100), // Thai: no spaces either
    ];
    for (const text of texts) {
      const fragments = chunkText(text);
      expect(fragments.length).toBeGreaterThan(1);
      const boundaries = wordBoundaries(text);
      for (const { start, end } of offsets(text, fragments)) {
        expect(boundaries.has(start)).toBe(true);
        expect(boundaries.has(end)).toBe(true);
      }
    }
  });

  it('cuts Chinese and Japanese at 。！？ even without spaces', () => {
    const text = '我们公司的吉祥物是一只紫色的美西螈，名叫昆汀。'.repeat(120);
    for (const f of chunkText(text)) expect(f.endsWith('。')).toBe(true);
  });

  it('cuts a single overlong "word" between characters, never inside a surrogate pair', () => {
    const blob = 'x'.repeat(3001);
    expect(chunkText(blob).map((f) => f.length)).toEqual([1200, 1200, 601]);
    const gothic = '𐌰'.repeat(1500); // one 1500-letter word, every letter a surrogate pair
    const fragments = chunkText(gothic);
    expect(fragments.map((f) => f.length)).toEqual([1200, 1200, 600]);
    expect(fragments.join('') === gothic).toBe(true);
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const f of fragments) expect(lone.test(f)).toBe(false);
  });

  it('normalizes line endings and blank-line runs, and drops NUL characters', () => {
    expect(chunkText('a\r\nb\r\n\r\n\r\n\r\nc\u0000d')).toEqual(['a\nb\n\ncd']);
  });

  it('chunks 5 MiB in linear time (under 3 s; ICU segmentation only ever sees one window)', () => {
    const text = `${sentences(9).join(' ')}\n\n`.repeat(9000).slice(0, 5 * 1024 * 1024);
    const started = Date.now();
    const fragments = chunkText(text);
    expect(fragments.length).toBeGreaterThan(4000);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses options that could not make progress', () => {
    expect(() => chunkText('x', { min: 100, overlap: 100 })).toThrow(RangeError);
  });
});

describe('searchText (what the index sees)', () => {
  it('lowercases every script, folds Latin accents and ё, and drops non-ASCII punctuation', () => {
    expect(searchText('Талисман «Квентин» — Ёлка. CAFÉ Straße ＡＢＣ１').replace(/\s+/g, ' ').trim()).toBe(
      'талисман квентин елка. cafe straße abc1',
    );
  });

  it('keeps marks that are letters elsewhere (й is not и)', () => {
    expect(searchText('Новый')).toBe('новый');
  });

  it('turns runs of Chinese, Japanese and Korean into overlapping bigrams', () => {
    expect(searchText('会社のマスコット').trim()).toBe('会社 社の のマ マス スコ コッ ット');
    expect(searchText('猫。').trim()).toBe('猫');
    expect(searchText('iPhone用').trim()).toBe('iphone 用');
  });
});

describe('deriveTitle', () => {
  it('is the first line, cut at a word when long', () => {
    expect(deriveTitle('\n  Opening hours \nWe open at 9.')).toBe('Opening hours');
    const long = deriveTitle(`${'word '.repeat(50)}\nnext`);
    expect(long.length).toBeLessThanOrEqual(121);
    expect(long).toMatch(/^word( word)+…$/);
  });
});

describe('splitDocument and splitText (passages on structure)', () => {
  const para = (n: number, word = 'lamp') =>
    Array.from({ length: n }, (_, i) => `Sentence ${i} is about the ${word}.`).join(' ');

  it('never mixes sections, and gives each passage its heading path', () => {
    const passages = splitText(
      '# Manual\n\nIntro.\n\n## Installation\n\n### Wi-Fi\n\nPress the button.\n\n## Care\n\nWipe it dry.',
    );
    expect(passages).toEqual([
      { text: 'Intro.', headingPath: ['Manual'] },
      { text: 'Press the button.', headingPath: ['Manual', 'Installation', 'Wi-Fi'] },
      { text: 'Wipe it dry.', headingPath: ['Manual', 'Care'] },
    ]);
  });

  it('keeps a heading with nothing under it as a passage of its own, so its words are not lost', () => {
    expect(splitText('# FAQ\n\n## Shipping\n\n## Returns\n\nWithin 30 days.')).toEqual([
      { text: 'Shipping', headingPath: ['FAQ', 'Shipping'] },
      { text: 'Within 30 days.', headingPath: ['FAQ', 'Returns'] },
    ]);
  });

  it('gathers whole blocks up to the target, list items and table rows on their own lines, never cut when they fit', () => {
    const items: Block[] = Array.from({ length: 60 }, (_, i) => ({
      kind: 'list_item',
      text: `Item ${i} ${'x'.repeat(40)}`,
    }));
    const passages = splitDocument({ blocks: items });
    expect(passages.length).toBeGreaterThan(1);
    for (const p of passages) {
      expect(p.text.length).toBeLessThanOrEqual(PASSAGE_DEFAULTS.max);
      for (const line of p.text.split('\n')) expect(line).toMatch(/^- Item \d+ x{40}$/);
    }
    expect(passages.flatMap((p) => p.text.split('\n'))).toHaveLength(60);
    const rows = splitDocument({
      blocks: [{ kind: 'table_row', cells: ['Lamp', '12 €'], header: ['Product', 'Price'] }],
    });
    expect(rows).toEqual([{ text: 'Product: Lamp; Price: 12 €', headingPath: [] }]);
  });

  it('starts a new passage on a new page, and carries the page', () => {
    const passages = splitDocument({
      blocks: [
        { kind: 'heading', level: 1, text: 'Guide', page: 1 },
        { kind: 'paragraph', text: 'On page one.', page: 1 },
        { kind: 'paragraph', text: 'On page two.', page: 2 },
      ],
    });
    expect(passages).toEqual([
      { text: 'On page one.', headingPath: ['Guide'], page: 1 },
      { text: 'On page two.', headingPath: ['Guide'], page: 2 },
    ]);
  });

  it('cuts a block longer than the largest passage with chunkText: never inside a word, CJK and blobs too', () => {
    const texts = [para(80), '会社のマスコットは紫のウーパールーパーです'.repeat(150), 'x'.repeat(3001)];
    for (const text of texts) {
      const passages = splitDocument({
        blocks: [
          { kind: 'heading', level: 1, text: 'H' },
          { kind: 'paragraph', text },
        ],
      });
      expect(passages.length).toBeGreaterThan(1);
      const boundaries = wordBoundaries(text);
      for (const p of passages) {
        expect(p.headingPath).toEqual(['H']);
        expect(p.text.length).toBeLessThanOrEqual(PASSAGE_DEFAULTS.max);
        if (!/^x+$/.test(text)) {
          const start = text.indexOf(p.text);
          expect(boundaries.has(start)).toBe(true);
          expect(boundaries.has(start + p.text.length)).toBe(true);
        }
      }
    }
  });

  it('reads pasted text as Markdown-ish: • and 1. items, fenced code, paragraphs of several lines', () => {
    const doc = readPlainText('Title line\nsecond line\n\n• one\n• two\n1. three\n\n```\nconst a = 1;\n```');
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Title line\nsecond line' },
      { kind: 'list_item', text: 'one' },
      { kind: 'list_item', text: 'two' },
      { kind: 'list_item', text: 'three' },
      { kind: 'code', text: 'const a = 1;' },
    ]);
  });
});
