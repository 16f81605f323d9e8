/**
 * An agent's business hours (docs/decisions/061-business-hours.md): when its team answers handed-over conversations.
 * Outside them a handoff still queues the conversation, but the visitor is told when someone will be back and asked
 * for a contact instead of waiting in silence. Hours are local times of one IANA time zone; daylight saving is the
 * zone's (Intl), so "09:00" stays nine in the morning all year.
 */

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface OpeningWindow {
  days: Weekday[];
  /** Local time `HH:MM`. */
  from: string;
  /** Local time `HH:MM`, after `from`; `24:00` is the end of the day. */
  to: string;
}

export interface BusinessHours {
  time_zone: string;
  open: OpeningWindow[];
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day at `at` in `zone`. */
function localTime(zone: string, at: number): { day: Weekday; minute: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(at).map((p) => [p.type, p.value]));
  return {
    day: parts.weekday.toLowerCase().slice(0, 3) as Weekday,
    minute: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** Whether the team is in at `at` (Unix ms). No hours set: always. */
export function isOpen(hours: BusinessHours | null | undefined, at: number): boolean {
  if (!hours) return true;
  const { day, minute } = localTime(hours.time_zone, at);
  return hours.open.some((w) => w.days.includes(day) && minute >= minutesOf(w.from) && minute < minutesOf(w.to));
}

const MINUTE = 60_000;
const STEP = 15 * MINUTE;
/** A week and a day: every weekly window comes round within it. */
const HORIZON = 8 * 24 * 60 * MINUTE;

/**
 * When the team is next in after `at` (Unix ms, to the minute), or null when no window ever opens. Walks forward in
 * quarter hours, then back minute by minute to the opening: plain arithmetic on instants, the zone's offset read at
 * each, so a daylight-saving change in between needs no special case.
 */
export function nextOpening(hours: BusinessHours, at: number): number | null {
  if (!hours.open.some((w) => w.days.length && minutesOf(w.to) > minutesOf(w.from))) return null;
  const start = Math.ceil(at / MINUTE) * MINUTE;
  for (let t = start; t <= start + HORIZON; t += STEP) {
    if (!isOpen(hours, t)) continue;
    let first = t;
    while (first - MINUTE >= start && isOpen(hours, first - MINUTE)) first -= MINUTE;
    return first;
  }
  return null;
}

/** "Monday at 09:00 (Europe/Tallinn)": when the team is back, as the visitor is told. */
const describers = new Map<string, Intl.DateTimeFormat>();

export function describeOpening(hours: BusinessHours, at: number): string {
  let describer = describers.get(hours.time_zone);
  if (!describer) {
    describer = new Intl.DateTimeFormat('en-GB', {
      timeZone: hours.time_zone,
      weekday: 'long',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    describers.set(hours.time_zone, describer);
  }
  const when = describer.formatToParts(at);
  const part = (type: string) => when.find((p) => p.type === type)?.value ?? '';
  return `${part('weekday')} at ${part('hour')}:${part('minute')} (${hours.time_zone})`;
}

/** Outside business hours: when the team is back (null: no window ever opens), in words and as Unix ms. */
export interface Away {
  backAt: number | null;
  text: string;
}

/**
 * Every turn of an agent with hours asks this (a hand-over may follow), and the walk to the next opening costs up to
 * a millisecond: the answer holds for the minute, so it is kept for it, per set of hours.
 */
const awayByMinute = new Map<string, Away | null>();
const AWAY_CACHE_ENTRIES = 1_000;

/** The visitor's words for a handoff outside business hours, or null within them (or with no hours set). */
export function awayNow(hours: BusinessHours | null | undefined, at: number): Away | null {
  if (!hours) return null;
  const key = `${Math.floor(at / MINUTE)}\n${JSON.stringify(hours)}`;
  const known = awayByMinute.get(key);
  if (known !== undefined) return known;
  if (awayByMinute.size >= AWAY_CACHE_ENTRIES) awayByMinute.clear();
  const away = awayAt(hours, at);
  awayByMinute.set(key, away);
  return away;
}

function awayAt(hours: BusinessHours, at: number): Away | null {
  if (isOpen(hours, at)) return null;
  const backAt = nextOpening(hours, at);
  const when = backAt === null ? '' : ` until ${describeOpening(hours, backAt)}`;
  return {
    backAt,
    text: `Our team is away${when}. Leave your e-mail or phone number and we'll get back to you; your messages here are kept for them.`,
  };
}
