/** The owner's check apart from the page (web/dashboard/src/pages/agent/check/model.ts). */
import { describe, expect, it, jest } from '@jest/globals';
// The dashboard's sources are an ES module package: the type from there, the code through Jest.
import type * as Model from '../../web/dashboard/src/pages/agent/check/model.js' with { 'resolution-mode': 'import' };

const { changeWords, lastDone, questionFrom, scoreWords, statusOf, statusWords, trendOf } = jest.requireActual<
  typeof Model
>('../../web/dashboard/src/pages/agent/check/model');

type Status = 'running' | 'done' | 'failed';
type Outcome = 'pending' | 'found' | 'not_found' | 'source_missing';

/** As the API sends them (lib/schemas/checks.ts): the model reads only some of the fields. */
const run = (id: string, status: Status, found: number, total = 4) => ({
  id,
  status,
  total,
  checked: status === 'running' ? 1 : total,
  found,
  missing: 0,
  score: status === 'done' ? found / total : null,
  error: null,
  started_at: 1_000,
  finished_at: status === 'running' ? null : 2_000,
  workflow_id: `knowledge-check/bot/${id}`,
});

const question = (
  over: { id?: string; question?: string; expected_source_id?: string; note?: string; updated_at?: number } = {},
) => ({
  id: 'chq_1',
  question: 'How fast do parcels ship?',
  expected_source_id: 'shipping',
  expected_source_title: 'Shipping times',
  note: null,
  created_at: 500,
  updated_at: 500,
  ...over,
});

const detail = (result: { outcome?: Outcome; rank?: number | null }) => ({
  ...run('chk_1', 'done', 1, 1),
  results: [
    {
      question_id: 'chq_1',
      question: 'How fast do parcels ship?',
      expected_source_id: 'shipping',
      expected_source_title: 'Shipping times',
      outcome: 'found' as Outcome,
      rank: 1 as number | null,
      passages: [],
      ...result,
    },
  ],
});

describe("the owner's check, apart from the page", () => {
  it('says what the last finished check found for each question', () => {
    expect(statusWords(statusOf(question(), detail({ rank: 1 })))).toBe('Found first');
    expect(statusWords(statusOf(question(), detail({ rank: 3 })))).toBe('Found at rank 3');
    expect(statusWords(statusOf(question(), detail({ outcome: 'not_found', rank: null })))).toBe('Not found');
    expect(statusWords(statusOf(question(), detail({ outcome: 'source_missing', rank: null })))).toBe(
      'Source no longer exists',
    );
    // Added since the check, or never checked at all.
    expect(statusOf(question({ id: 'chq_2' }), detail({}))).toEqual({ kind: 'unchecked' });
    expect(statusWords(statusOf(question(), undefined))).toBe('Not checked yet');
  });

  it('marks a question edited since the check, but not for its note alone', () => {
    const later = { updated_at: 5_000 };
    expect(statusOf(question({ ...later, expected_source_id: 'contact' }), detail({}))).toMatchObject({
      changed: true,
    });
    expect(statusOf(question({ ...later, question: 'Shipping speed?' }), detail({}))).toMatchObject({ changed: true });
    expect(statusOf(question({ ...later, note: 'Asked daily' }), detail({}))).toMatchObject({ changed: false });
  });

  it('reads the trend from finished runs, oldest first, and says how the score moved', () => {
    const runs = [run('c', 'running', 0), run('b', 'done', 4), run('x', 'failed', 0), run('a', 'done', 3)];
    expect(lastDone(runs)?.id).toBe('b');
    expect(trendOf(runs).map((r) => r.id)).toEqual(['a', 'b']);
    expect(changeWords(trendOf(runs))).toBe('up 25 points since the check before');
    expect(changeWords([{ score: 1 }, { score: 0.99 }])).toBe('down 1 point since the check before');
    expect(changeWords([{ score: 0.5 }, { score: 0.5 }])).toBe('unchanged since the check before');
    expect(changeWords([{ score: 0.5 }])).toBeUndefined();
    expect(scoreWords(run('a', 'done', 3), true)).toBe('3 of 4 found (75%)');
  });

  it("starts a question from a visitor's words, without markup, on one line, within the limit", () => {
    expect(questionFrom('[[fake:tool-call:cannot_answer]] Do you sell\n gift cards?', 1000)).toBe(
      'Do you sell gift cards?',
    );
    expect(questionFrom('abcdef', 3)).toBe('abc');
  });
});
