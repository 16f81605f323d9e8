import type { ResolutionCounts } from '../../api/reports';
import { dayLong, dayOf, dayShort } from '../../days';

/**
 * The resolution report's rules apart from the DOM (docs/decisions/064-resolution-report.md): the period as days of
 * the browser's time zone, the four outcomes every conversation has one of (they add up to the conversations), shares
 * and the chart's summary in words.
 */

export type OutcomeKey = 'resolved_by_agent' | 'not_resolved_by_agent' | 'handed_over' | 'no_answer';

/** The outcomes in the order the chart stacks them (bottom up) and the table lists them; `tone` is reports.css's. */
export const OUTCOMES: { key: OutcomeKey; label: string; short: string; tone: string }[] = [
  { key: 'resolved_by_agent', label: 'Resolved by the agent', short: 'By the agent', tone: 'agent' },
  { key: 'not_resolved_by_agent', label: 'Not resolved by the agent', short: 'Not by the agent', tone: 'not' },
  { key: 'handed_over', label: 'Handed to a person', short: 'To a person', tone: 'person' },
  { key: 'no_answer', label: 'No answer', short: 'No answer', tone: 'none' },
];

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a local date. */
export const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

/** The last `days` days up to today, in the browser's time zone. */
export function lastDays(days: number, now = new Date()): { from: string; to: string } {
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1));
  return { from: localDay(start), to: localDay(now) };
}

/** The browser's IANA time zone (the API counts days in it); UTC when the browser does not say. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** A share as a whole percent, "17 %"; "0 %" of nothing. */
export function percent(part: number, whole: number): string {
  return `${whole > 0 ? Math.round((part / whole) * 100) : 0} %`;
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** The chart's name for screen readers: the period, the totals by outcome, and the busiest day. */
export function chartSummary(days: ({ date: string } & ResolutionCounts)[], totals: ResolutionCounts): string {
  const first = days[0]?.date;
  const last = days[days.length - 1]?.date;
  const period = first && last ? `from ${dayShort.format(dayOf(first))} to ${dayShort.format(dayOf(last))}` : '';
  if (totals.conversations === 0) return `Conversations per day ${period}: none.`;
  const parts = OUTCOMES.map((o) => `${totals[o.key].toLocaleString()} ${o.label.toLowerCase()}`).join(', ');
  const busiest = days.reduce((best, d) => (d.conversations > best.conversations ? d : best), days[0]);
  return (
    `Conversations per day ${period}: ${plural(totals.conversations, 'conversation', 'conversations')} — ${parts}. ` +
    `The most, ${busiest.conversations.toLocaleString()}, on ${dayLong.format(dayOf(busiest.date))}.`
  );
}
