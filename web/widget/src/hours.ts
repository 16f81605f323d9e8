/**
 * What the widget says when a conversation was handed over outside the team's hours (docs/decisions/061-business-hours.md):
 * that nobody is coming now, and when the team is back, in the visitor's own time zone and locale. DOM-free.
 */

const DAY_MS = 86_400_000;

/** Local midnight of the day `ms` falls on (in the visitor's time zone). */
function dayStart(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

/**
 * "today at 17:00", "tomorrow at 09:00", "Monday at 09:00", "Monday 14 July at 09:00" (the day and time in the
 * visitor's locale and zone), from the API's `back_at`.
 */
function backAtLabel(backAt: number, now = Date.now(), locale?: string): string {
  const time = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }).format(backAt);
  // Days apart by the calendar, rounded: a change of offset between the two makes a day 23 or 25 hours long.
  const days = Math.round((dayStart(backAt) - dayStart(now)) / DAY_MS);
  if (days <= 0) return `today at ${time}`;
  if (days === 1) return `tomorrow at ${time}`;
  const day = new Intl.DateTimeFormat(
    locale,
    days < 7 ? { weekday: 'long' } : { weekday: 'long', day: 'numeric', month: 'long' },
  ).format(backAt);
  return `${day} at ${time}`;
}

/** The header's line while the conversation waits outside the hours (short: one line): nobody is coming now. */
export function awayLine(backAt: number | null, now = Date.now()): string {
  return backAt === null ? 'Team away right now' : `Team away — back ${backAtLabel(backAt, now)}`;
}

/** What the contact form asks for outside the hours. */
export function awayPrompt(backAt: number | null, now = Date.now()): string {
  const away = backAt === null ? 'The team is away right now' : `The team is away — back ${backAtLabel(backAt, now)}`;
  return `${away}. Leave your e-mail or phone number and we'll get back to you.`;
}
