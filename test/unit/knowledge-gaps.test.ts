import { describe, expect, it } from '@jest/globals';
import { contentWords, groupQuestions } from '../../lib/reports/gaps';
import { datesBetween } from '../../lib/reports/resolution';

const q = (text: string, at: number) => ({ run_id: `run_${at}`, text, at, session_id: null });

describe('what is missing', () => {
  it('reads a question by its content words', () => {
    expect([...contentWords('Do you ship parcels to Norway?')]).toEqual(['ship', 'parcel', 'norway']);
    expect([...contentWords('Shipping to NORWAY [[fake:cite]]')]).toEqual(['ship', 'norway']);
  });

  it('groups the same question asked in other words, most asked first', () => {
    const groups = groupQuestions([
      q('Can I buy a gift card?', 5),
      q('What is your phone number?', 4),
      q('Do you sell gift cards?', 3),
      q('gift cards?', 2),
      q('Do you ship to Norway?', 1),
    ]);
    expect(groups.map((g) => [g.count, g.run_ids])).toEqual([
      [3, ['run_5', 'run_3', 'run_2']],
      [1, ['run_4']],
      [1, ['run_1']],
    ]);
    expect(groups[0].last_asked_at).toBe(5);
    expect(groups[0].examples.map((e) => e.text)).toEqual([
      'Can I buy a gift card?',
      'Do you sell gift cards?',
      'gift cards?',
    ]);
  });

  it('names a group by its most frequent wording, and shows each wording once', () => {
    const [group] = groupQuestions([q('Refund?', 3), q('refund?', 2), q('Refund policy', 1)]);
    expect(group.question).toBe('Refund?');
    expect(group.examples.map((e) => e.text)).toEqual(['Refund?', 'Refund policy']);
  });

  it('counts the days of a period, both ends included', () => {
    expect(datesBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });
});
