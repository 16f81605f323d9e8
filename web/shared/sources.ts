import type { AnswerSource } from './contract';

/**
 * The knowledge sources an answer names (`sources` of a chat reply, a stream's end frame, a message), read for the
 * front ends: no DOM and no framework here. The server's contract says what they are; these checks keep a malformed
 * entry (or a future shape) from breaking a page: it is left out.
 */

export type { AnswerSource };

/** The well-formed sources of `value` in the order given; undefined when there are none. */
export function readSources(value: unknown): AnswerSource[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const sources: AnswerSource[] = [];
  for (const s of value as unknown[]) {
    if (!s || typeof s !== 'object') continue;
    const { ref, source_id, title, url, page, heading } = s as Record<string, unknown>;
    if (typeof ref !== 'number' || !Number.isFinite(ref) || typeof source_id !== 'string') continue;
    if (typeof title !== 'string') continue;
    sources.push({
      ref,
      source_id,
      title,
      ...(typeof url === 'string' ? { url } : {}),
      ...(typeof page === 'number' && Number.isInteger(page) ? { page } : {}),
      ...(typeof heading === 'string' && heading ? { heading } : {}),
    });
  }
  return sources.length ? sources : undefined;
}

/** A source's address when it may be a link: an absolute `http(s):` address only (never `javascript:`, `data:`…). */
export function sourceHref(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}
