/**
 * Text Postgres can store. A `text` column refuses NUL, and `jsonb` refuses NUL and unpaired surrogate escapes
 * (`\ud800`); the `pg` driver turns an unpaired surrogate of a text parameter into U+FFFD on the way. Input that
 * carries them is refused at the edge (api/route.ts); text the platform produces or receives as bytes (model output,
 * hook bodies, fetched pages) is made storable with `storableText`.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Why a string cannot be stored as is, or null when it can. */
export function unstorableReason(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must not contain unpaired surrogate characters';
  return null;
}

/** The text with NUL removed and unpaired surrogates replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replace(/\u0000/g, '').replace(LONE_SURROGATES, '\uFFFD');
}

/**
 * "Not blank", spelled so that JavaScript and the contract's readers agree: a character that is whitespace to neither
 * JavaScript's `trim` nor Python's `\s` (schemathesis generates from this pattern). `\s` alone differs between the two
 * (U+FEFF is space to JavaScript only, U+001C–U+001F to Python only), so the union is excluded explicitly.
 */
export const NOT_BLANK = /[^\s\u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * Untrusted text for a model, to be put inside a marked element (`<untrusted-data>…</untrusted-data>`,
 * `<conversation>…</conversation>`): every `<` and `>` escaped as JSON does it (`\u003c`, `\u003e`), so the text can
 * neither close the element it is in nor open another. JSON text stays valid JSON.
 */
export function escapeMarkup(text: string): string {
  return text.replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
}
