import type { Bot } from '../../api/agents';

/**
 * An agent's business hours as the settings edit them (docs/decisions/061-business-hours.md), apart from the DOM: the
 * form's draft and the API's value, the hours in a line, and the API's refusal in the owner's words.
 */

export type BusinessHours = NonNullable<Bot['business_hours']>;
export type Weekday = BusinessHours['open'][number]['days'][number];

export const WEEKDAYS: { id: Weekday; short: string; long: string }[] = [
  { id: 'mon', short: 'Mon', long: 'Monday' },
  { id: 'tue', short: 'Tue', long: 'Tuesday' },
  { id: 'wed', short: 'Wed', long: 'Wednesday' },
  { id: 'thu', short: 'Thu', long: 'Thursday' },
  { id: 'fri', short: 'Fri', long: 'Friday' },
  { id: 'sat', short: 'Sat', long: 'Saturday' },
  { id: 'sun', short: 'Sun', long: 'Sunday' },
];

/** At most this many windows (the API's limit). */
export const MAX_WINDOWS = 21;

/** One window as the form holds it: `to` as a time input shows it ("00:00" for the API's "24:00", the day's end). */
export interface WindowDraft {
  key: number;
  days: Weekday[];
  from: string;
  to: string;
}

/** Off keeps what was typed, so turning the hours on again brings it back. */
export interface HoursDraft {
  on: boolean;
  timeZone: string;
  open: WindowDraft[];
}

let nextKey = 0;

export function newWindow(days: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri']): WindowDraft {
  return { key: ++nextKey, days, from: '09:00', to: '17:00' };
}

/** The browser's own time zone, the first guess for the team's. */
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Every zone the browser knows, for the zone field's suggestions (empty where it cannot say). */
export function knownZones(): string[] {
  const intl = Intl as { supportedValuesOf?: (key: string) => string[] };
  try {
    return intl.supportedValuesOf?.('timeZone') ?? [];
  } catch {
    return [];
  }
}

const inWeekOrder = (days: Weekday[]) => WEEKDAYS.map((d) => d.id).filter((d) => days.includes(d));

export function draftOf(hours: BusinessHours | null): HoursDraft {
  if (!hours) return { on: false, timeZone: browserZone(), open: [newWindow()] };
  return {
    on: true,
    timeZone: hours.time_zone,
    open: hours.open.map((w) => ({ key: ++nextKey, days: inWeekOrder(w.days), from: w.from, to: shownTo(w.to) })),
  };
}

/** A time input cannot show "24:00": the end of the day is shown as midnight, "00:00". */
const shownTo = (to: string) => (to === '24:00' ? '00:00' : to);
const sentTo = (to: string) => (to === '00:00' ? '24:00' : to);

/** What the API is sent: null for always open. Days in week order; the API checks the rest and says what is wrong. */
export function hoursOf(draft: HoursDraft): BusinessHours | null {
  if (!draft.on) return null;
  return {
    time_zone: draft.timeZone.trim(),
    open: draft.open.map((w) => ({ days: inWeekOrder(w.days), from: w.from, to: sentTo(w.to) })),
  };
}

/** Whether two values mean the same hours (the order of days aside). */
export function sameHours(a: BusinessHours | null, b: BusinessHours | null): boolean {
  const norm = (h: BusinessHours | null) =>
    h && { time_zone: h.time_zone, open: h.open.map((w) => ({ days: inWeekOrder(w.days), from: w.from, to: w.to })) };
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

/** "Mon–Fri", "Mon, Wed, Sat–Sun": runs of three days or more as a range. */
export function daysLabel(days: Weekday[]): string {
  const at = inWeekOrder(days).map((d) => WEEKDAYS.findIndex((w) => w.id === d));
  const parts: string[] = [];
  for (let i = 0; i < at.length;) {
    let j = i;
    while (j + 1 < at.length && at[j + 1] === at[j] + 1) j++;
    if (j - i >= 2) parts.push(`${WEEKDAYS[at[i]].short}–${WEEKDAYS[at[j]].short}`);
    else for (let k = i; k <= j; k++) parts.push(WEEKDAYS[at[k]].short);
    i = j + 1;
  }
  return parts.join(', ');
}

/** "Mon–Fri 09:00–17:00; Sat 10:00–14:00 (Europe/Tallinn)", or "Always open". */
export function hoursSummary(hours: BusinessHours | null): string {
  if (!hours) return 'Always open';
  const windows = hours.open.map((w) => `${daysLabel(w.days)} ${w.from}–${w.to}`);
  return `${windows.join('; ')} (${hours.time_zone})`;
}

/** What the API's 400 names, in the settings' own words: `business_hours.open.0.to` is "Opening hours 1". */
function fieldName(path: string): string | undefined {
  if (path === 'business_hours.time_zone') return 'Time zone';
  const window = /^business_hours\.open\.(\d+)(?:\.(days|from|to))?/.exec(path);
  if (window) return `Opening hours ${Number(window[1]) + 1}`;
  if (path.startsWith('business_hours')) return 'Business hours';
  if (path === 'when_unanswered') return 'When the agent cannot answer';
  return undefined;
}

function plainProblem(path: string, problem: string): string {
  if (/`from` must be before `to`/.test(problem)) return 'the closing time must be after the opening time';
  if (/expected array to have >=1/.test(problem)) {
    return path.endsWith('.days') ? 'choose at least one day' : 'add at least one opening';
  }
  return problem.replace(/`/g, '');
}

/**
 * The API's refusal (`business_hours.open.0.to: \`from\` must be before \`to\``; several joined by "; ") in plain
 * words: "Opening hours 1: the closing time must be after the opening time." Anything else is left as it came.
 */
export function plainSettingsError(message: string): string {
  return message
    .split('; ')
    .map((part) => {
      const m = /^([\w.]+): (.*)$/.exec(part);
      const name = m && fieldName(m[1]);
      if (!m || !name) return part;
      const said = `${name}: ${plainProblem(m[1], m[2])}`;
      return /[.!?]$/.test(said) ? said : `${said}.`;
    })
    .join(' ');
}

/** Which parts of the hours the API refused: the zone, and the windows by index. */
export function refusedParts(message: string | undefined): { zone: boolean; windows: Set<number> } {
  const windows = new Set<number>();
  for (const m of (message ?? '').matchAll(/business_hours\.open\.(\d+)/g)) windows.add(Number(m[1]));
  return { zone: !!message?.includes('business_hours.time_zone'), windows };
}
