import { describe, expect, it } from '@jest/globals';
import type { Passage } from '../../lib/knowledge/retrieve';
import { buildPrompt } from '../../lib/runs/prompt';
import { citedRefs, numberSources, sourcesOfAnswer } from '../../lib/runs/sources';

const passage = (sourceId: string, text: string, url?: string): Passage => ({
  sourceId,
  title: `Title of ${sourceId}`,
  text,
  score: 1,
  ...(url ? { url } : {}),
});

/** Two passages of one page and one of another: the page is one source, numbered once. */
const PASSAGES = [
  passage('faq', 'Parcels ship daily.', 'https://shop.example/faq'),
  passage('terms', 'Returns within 30 days.'),
  passage('faq', 'Parcels are insured.', 'https://shop.example/faq'),
];

describe('answer sources', () => {
  it('numbers sources once each, best passage first, and gives the prompt those numbers', () => {
    expect(numberSources(PASSAGES)).toEqual([
      { ref: 1, source_id: 'faq', title: 'Title of faq', url: 'https://shop.example/faq' },
      { ref: 2, source_id: 'terms', title: 'Title of terms' },
    ]);
    const system = buildPrompt({ input: 'q' }, { instructions: '', passages: PASSAGES, history: [] })[0]
      .content as string;
    expect(system).toContain('[1] Title of faq: Parcels ship daily.');
    expect(system).toContain('[2] Title of terms: Returns within 30 days.');
    expect(system).toContain('[1] Title of faq: Parcels are insured.');
  });

  it('reads citations in the forms models write them', () => {
    expect(citedRefs('Yes [2]. Also [1, 3] and [3][4].')).toEqual([2, 1, 3, 4]);
    expect(citedRefs('No citations, only [brackets] and [a1].')).toEqual([]);
  });

  it('names the cited sources in order of citation, ignoring numbers that name none', () => {
    expect(sourcesOfAnswer(PASSAGES, 'Returns are free [2]; parcels ship daily [1] [7].')).toEqual([
      { ref: 2, source_id: 'terms', title: 'Title of terms' },
      { ref: 1, source_id: 'faq', title: 'Title of faq', url: 'https://shop.example/faq' },
    ]);
  });

  it('names every source given when the answer cites none, and none without passages', () => {
    expect(sourcesOfAnswer(PASSAGES, 'Parcels ship daily.').map((s) => s.source_id)).toEqual(['faq', 'terms']);
    expect(sourcesOfAnswer(PASSAGES, 'See item [9].').map((s) => s.source_id)).toEqual(['faq', 'terms']);
    expect(sourcesOfAnswer([], 'Hello [1]')).toEqual([]);
  });
});
