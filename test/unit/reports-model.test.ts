/** The resolution report's rules, apart from the page (web/dashboard/src/pages/reports/model.ts). */
import { describe, expect, it, jest } from '@jest/globals';

/**
 * The dashboard's sources are an ES module package whose files import each other without extensions (Vite resolves
 * them), which this project's TypeScript settings cannot follow from a test: the code comes through Jest, typed here
 * by what the test uses of it.
 */
type Counts = ReturnType<typeof counts>;
const { OUTCOMES, chartSummary, lastDays, localDay, percent } = jest.requireActual<{
  OUTCOMES: { key: Exclude<keyof Counts, 'conversations'>; label: string }[];
  chartSummary(days: ({ date: string } & Counts)[], totals: Counts): string;
  lastDays(days: number, now?: Date): { from: string; to: string };
  localDay(d: Date): string;
  percent(part: number, whole: number): string;
}>('../../web/dashboard/src/pages/reports/model');

const counts = (resolved: number, not: number, handed: number, none: number) => ({
  conversations: resolved + not + handed + none,
  resolved_by_agent: resolved,
  not_resolved_by_agent: not,
  handed_over: handed,
  no_answer: none,
});

describe('the resolution report, apart from the page', () => {
  it('counts the period in local days, today included', () => {
    const now = new Date(2026, 10, 28, 15, 30); // 28 November, local time
    expect(localDay(now)).toBe('2026-11-28');
    expect(lastDays(1, now)).toEqual({ from: '2026-11-28', to: '2026-11-28' });
    expect(lastDays(7, now)).toEqual({ from: '2026-11-22', to: '2026-11-28' });
    // Across a month's and a year's end.
    expect(lastDays(30, new Date(2026, 0, 10))).toEqual({ from: '2025-12-12', to: '2026-01-10' });
  });

  it('gives shares as whole percents, and nothing of nothing', () => {
    expect(percent(1, 6)).toBe('17 %');
    expect(percent(6, 6)).toBe('100 %');
    expect(percent(0, 0)).toBe('0 %');
  });

  it('has four outcomes that every conversation is one of', () => {
    const keys = OUTCOMES.map((o) => o.key);
    expect(new Set(keys).size).toBe(4);
    const totals = counts(3, 1, 2, 4);
    expect(keys.reduce((sum, k) => sum + totals[k], 0)).toBe(totals.conversations);
  });

  it('says the chart in words for screen readers: the period, the totals by outcome and the busiest day', () => {
    const days = [
      { date: '2026-11-26', ...counts(1, 0, 0, 0) },
      { date: '2026-11-27', ...counts(2, 1, 1, 1) },
      { date: '2026-11-28', ...counts(0, 0, 1, 0) },
    ];
    const said = chartSummary(days, counts(3, 1, 2, 1));
    expect(said).toMatch(/^Conversations per day from \S+ 26 to \S+ 28: 7 conversations — /);
    expect(said).toContain('3 resolved by the agent, 1 not resolved by the agent, 2 handed to a person, 1 no answer');
    expect(said).toMatch(/The most, 5, on \S+, \S+ 27\.$/);
    expect(chartSummary([{ date: '2026-11-28', ...counts(0, 0, 0, 0) }], counts(0, 0, 0, 0))).toMatch(/: none\.$/);
    expect(chartSummary([{ date: '2026-11-28', ...counts(1, 0, 0, 0) }], counts(1, 0, 0, 0))).toContain(
      '1 conversation —',
    );
  });
});
