/** An agent's business hours as the settings edit them, apart from the page (web/dashboard/src/pages/agent/hours-model.ts). */
import { describe, expect, it, jest } from '@jest/globals';

/**
 * The dashboard's sources are an ES module package whose files import each other without extensions (Vite resolves
 * them), which this project's TypeScript settings cannot follow from a test: the code comes through Jest, typed here
 * by what the test uses of it.
 */
type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
type Hours = { time_zone: string; open: { days: Weekday[]; from: string; to: string }[] };
type Draft = { on: boolean; timeZone: string; open: { key: number; days: Weekday[]; from: string; to: string }[] };
const { daysLabel, draftOf, hoursOf, hoursSummary, newWindow, plainSettingsError, refusedParts, sameHours } =
  jest.requireActual<{
    daysLabel(days: Weekday[]): string;
    draftOf(hours: Hours | null): Draft;
    hoursOf(draft: Draft): Hours | null;
    hoursSummary(hours: Hours | null): string;
    newWindow(): Draft['open'][number];
    plainSettingsError(message: string): string;
    refusedParts(message: string | undefined): { zone: boolean; windows: Set<number> };
    sameHours(a: Hours | null, b: Hours | null): boolean;
  }>('../../web/dashboard/src/pages/agent/hours-model');

const weekdays = {
  time_zone: 'Europe/Tallinn',
  open: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' }],
} as const;

describe('business hours in the settings, apart from the page', () => {
  it('round-trips the API value through the form, the end of the day shown as midnight and sent as 24:00', () => {
    const hours = {
      time_zone: 'Europe/Tallinn',
      open: [
        { days: ['sat', 'mon'], from: '10:00', to: '24:00' },
        { days: ['wed'], from: '08:30', to: '12:00' },
      ],
    } as Hours;
    const draft = draftOf(hours);
    expect(draft.on).toBe(true);
    // Days come back in week order, and "24:00" is what a time input cannot show.
    expect(draft.open.map((w) => [w.days, w.to])).toEqual([
      [['mon', 'sat'], '00:00'],
      [['wed'], '12:00'],
    ]);
    expect(hoursOf(draft)).toEqual({
      time_zone: 'Europe/Tallinn',
      open: [
        { days: ['mon', 'sat'], from: '10:00', to: '24:00' },
        { days: ['wed'], from: '08:30', to: '12:00' },
      ],
    });
    expect(sameHours(hoursOf(draft), hours)).toBe(true);
  });

  it('is always open when off, keeping what was typed to bring back, and starts from a working week', () => {
    const draft = draftOf(null);
    expect(draft.on).toBe(false);
    expect(draft.open).toHaveLength(1);
    expect(draft.open[0]).toMatchObject({ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' });
    expect(hoursOf(draft)).toBeNull();
    expect(hoursOf({ ...draft, on: true, timeZone: '  UTC ' })).toEqual({
      time_zone: 'UTC',
      open: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' }],
    });
    // Each window has a key of its own, so the form keeps its rows apart.
    expect(newWindow().key).not.toBe(newWindow().key);
  });

  it('compares hours by meaning, not by the order days were ticked in', () => {
    const a = { time_zone: 'UTC', open: [{ days: ['fri', 'mon'], from: '09:00', to: '17:00' }] } as Hours;
    const b = { time_zone: 'UTC', open: [{ days: ['mon', 'fri'], from: '09:00', to: '17:00' }] } as Hours;
    expect(sameHours(a, b)).toBe(true);
    expect(sameHours(a, { ...b, time_zone: 'Europe/Tallinn' })).toBe(false);
    expect(sameHours(a, null)).toBe(false);
    expect(sameHours(null, null)).toBe(true);
  });

  it('says days as ranges of three or more, and the hours in a line', () => {
    expect(daysLabel(['fri', 'mon', 'tue', 'wed', 'thu'])).toBe('Mon–Fri');
    expect(daysLabel(['mon', 'wed', 'sat', 'sun'])).toBe('Mon, Wed, Sat, Sun');
    expect(daysLabel(['mon', 'tue', 'thu', 'fri', 'sat'])).toBe('Mon, Tue, Thu–Sat');
    expect(daysLabel([])).toBe('');
    expect(hoursSummary(weekdays as unknown as Hours)).toBe('Mon–Fri 09:00–17:00 (Europe/Tallinn)');
    expect(hoursSummary(null)).toBe('Always open');
  });

  it('puts the API’s refusal in the settings’ own words, and finds the parts it names', () => {
    expect(plainSettingsError('business_hours.open.0.to: `from` must be before `to`')).toBe(
      'Opening hours 1: the closing time must be after the opening time.',
    );
    expect(
      plainSettingsError(
        'business_hours.open.1.days: expected array to have >=1 items; business_hours.time_zone: unknown time zone',
      ),
    ).toBe('Opening hours 2: choose at least one day. Time zone: unknown time zone.');
    expect(plainSettingsError('business_hours.open: expected array to have >=1 items')).toBe(
      'Business hours: add at least one opening.',
    );
    // Anything it does not know is left as it came.
    expect(plainSettingsError('Something else went wrong')).toBe('Something else went wrong');
    const parts = refusedParts(
      'business_hours.open.2.from: bad; business_hours.open.0.to: bad; business_hours.time_zone: x',
    );
    expect(parts.zone).toBe(true);
    expect([...parts.windows].sort()).toEqual([0, 2]);
    expect(refusedParts(undefined)).toEqual({ zone: false, windows: new Set() });
  });
});
