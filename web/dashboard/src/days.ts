/** Calendar days as the API counts them (`YYYY-MM-DD`), and their names for people (billing, the reports). */

/** `YYYY-MM-DD` as a Date at its UTC midnight: formatted with `timeZone: 'UTC'` it is that calendar day anywhere. */
export const dayOf = (date: string) => new Date(`${date}T00:00:00Z`);

/** "Nov 25": a chart's day labels. */
export const dayShort = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** "Tue, Nov 25": tooltips, tables and summaries. */
export const dayLong = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});
