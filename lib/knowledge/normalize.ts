/**
 * Text as the search index sees it. Documents and queries go through the same function, so whatever it does, both
 * sides agree. Done here rather than in Postgres because:
 * - with a C locale (our embedded Postgres, and many hosted ones) `to_tsvector` lowercases ASCII only, and treats
 *   every non-ASCII character, punctuation included, as a letter: «Квентин» would be one word, distinct from
 *   квентин;
 * - Chinese and Japanese have no spaces, so the parser sees a whole clause as one "word"; indexing overlapping
 *   character bigrams (as Lucene's CJK analyzer does) lets a question match any two-character piece of it.
 */

/**
 * Bumped whenever the output of `searchText` (or the chunker, or what of a source is indexed) changes, so unchanged
 * sources are re-indexed. 3: a derived title is no longer indexed as a title.
 */
export const SEARCH_TEXT_VERSION = 3;

// Runs of scripts written without spaces between words (Hangul has spaces but glues particles to words).
const BIGRAM_RUN = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+/gu;
// Non-ASCII characters that are not part of a word. ASCII punctuation stays: Postgres' parser reads e-mails, URLs,
// versions and hyphenated words out of it.
const NON_WORD = /[^\x00-\x7f\p{L}\p{N}\p{M}]+/gu;
const LATIN_MARKS = /(\p{Script=Latin})\p{M}+/gu;

function bigrams(run: string): string {
  const chars = Array.from(run);
  if (chars.length < 2) return run;
  const out: string[] = [];
  for (let i = 0; i < chars.length - 1; i++) out.push(chars[i] + chars[i + 1]);
  return out.join(' ');
}

export function searchText(text: string): string {
  return (
    text
      .normalize('NFKC') // full-width Latin and digits, ligatures, compatibility forms
      .toLowerCase()
      // Accent-insensitive for Latin script only: café = cafe. Marks carry meaning elsewhere (й is not и).
      .normalize('NFD')
      .replace(LATIN_MARKS, '$1')
      .normalize('NFC')
      .replace(/ё/g, 'е') // Russian texts write ё as е more often than not
      .replace(NON_WORD, ' ')
      .replace(BIGRAM_RUN, (run) => ` ${bigrams(run)} `)
  );
}
