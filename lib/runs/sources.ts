import type { Passage } from '../knowledge/retrieve';
import { passageContext } from '../knowledge/store';
import type { AnswerSource } from '../../workflows/contracts/agent-run';

/**
 * Answers name the knowledge sources they used (docs/decisions/058-answers-cite-sources.md). The prompt numbers
 * the sources of the passages it gives the model — one number per source, so the passages of one page share it — and
 * asks the model to cite them as `[n]`. The numbers it cites are the answer's sources; an answer drawn from passages
 * that cites none names every source it was given (the model saw them all, and a visitor is better served by a list
 * that is a little long than by none).
 */

/** The passages' sources in order of first appearance (best passage first), each with the number the prompt gives it. */
export function numberSources(passages: Passage[]): AnswerSource[] {
  const sources: AnswerSource[] = [];
  for (const p of passages) {
    if (sources.some((s) => s.source_id === p.sourceId)) continue;
    // The best passage of a source names its place: the page and headings an answer's reader can turn to.
    const heading = p.headingPath?.length ? passageContext('', headingsBelowTitle(p)) : '';
    sources.push({
      ref: sources.length + 1,
      source_id: p.sourceId,
      title: p.title || p.sourceId,
      ...(p.url ? { url: p.url } : {}),
      ...(p.page !== undefined ? { page: p.page } : {}),
      ...(heading ? { heading } : {}),
    });
  }
  return sources;
}

/** A passage's headings without a first one that only repeats its source's title. */
function headingsBelowTitle(p: Passage): string[] {
  const path = p.headingPath ?? [];
  return path[0] === p.title ? path.slice(1) : path;
}

/** The number the prompt gives each passage: its source's. */
export function sourceRefOf(passages: Passage[]): number[] {
  const numbered = numberSources(passages);
  return passages.map((p) => numbered.find((s) => s.source_id === p.sourceId)!.ref);
}

/** `[2]`, `[1, 3]`, `[1][3]`: the numbers a text cites, in order of first citation. */
export function citedRefs(text: string): number[] {
  const refs: number[] = [];
  for (const m of text.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g)) {
    for (const n of m[1].split(',').map((x) => Number(x.trim()))) if (!refs.includes(n)) refs.push(n);
  }
  return refs;
}

/**
 * The sources an answer used: those it cites (in order of first citation), or, when it cites none of them, all it
 * was given. Numbers that name no source (the model's own brackets, a citation of something else) are ignored.
 */
export function sourcesOfAnswer(passages: Passage[], text: string): AnswerSource[] {
  const given = numberSources(passages);
  const cited = citedRefs(text)
    .map((n) => given.find((s) => s.ref === n))
    .filter((s): s is AnswerSource => s !== undefined);
  return cited.length ? cited : given;
}
