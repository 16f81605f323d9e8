import { describe, expect, it } from '@jest/globals';
import { type BusinessHours, awayNow, describeOpening, isOpen, nextOpening } from '../../lib/bots/hours';

/** Tallinn: UTC+2 in winter, UTC+3 from the last Sunday of March (2026-03-29, 03:00 local). */
const TALLINN: BusinessHours = {
  time_zone: 'Europe/Tallinn',
  open: [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:30' },
    { days: ['sat'], from: '10:00', to: '14:00' },
  ],
};

describe('business hours', () => {
  it('are local times of their zone', () => {
    // Wednesday 2026-01-14 07:00 UTC is 09:00 in Tallinn (UTC+2).
    expect(isOpen(TALLINN, Date.UTC(2026, 0, 14, 7, 0))).toBe(true);
    expect(isOpen(TALLINN, Date.UTC(2026, 0, 14, 6, 59))).toBe(false);
    expect(isOpen(TALLINN, Date.UTC(2026, 0, 14, 15, 29))).toBe(true);
    expect(isOpen(TALLINN, Date.UTC(2026, 0, 14, 15, 30))).toBe(false);
    expect(isOpen(null, Date.UTC(2026, 0, 14, 3, 0))).toBe(true);
  });

  it('find the next opening to the minute, across a weekend and a change of daylight saving', () => {
    // Friday evening → Saturday 10:00 local.
    expect(nextOpening(TALLINN, Date.UTC(2026, 0, 16, 18, 0))).toBe(Date.UTC(2026, 0, 17, 8, 0));
    // Saturday 2026-03-28 after closing → Monday 2026-03-30 09:00, by then UTC+3.
    expect(nextOpening(TALLINN, Date.UTC(2026, 2, 28, 13, 0))).toBe(Date.UTC(2026, 2, 30, 6, 0));
    // A minute before opening.
    expect(nextOpening(TALLINN, Date.UTC(2026, 0, 14, 6, 59, 30))).toBe(Date.UTC(2026, 0, 14, 7, 0));
    expect(nextOpening({ time_zone: 'UTC', open: [{ days: [], from: '09:00', to: '10:00' }] }, 0)).toBeNull();
  });

  it("tell the visitor when the team is back, in the zone's own time", () => {
    expect(describeOpening(TALLINN, Date.UTC(2026, 2, 30, 6, 0))).toBe('Monday at 09:00 (Europe/Tallinn)');
    const away = awayNow(TALLINN, Date.UTC(2026, 2, 28, 13, 0));
    expect(away).toEqual({
      backAt: Date.UTC(2026, 2, 30, 6, 0),
      text: expect.stringMatching(/^Our team is away until Monday at 09:00 \(Europe\/Tallinn\)\. Leave your e-mail/),
    });
    expect(awayNow(TALLINN, Date.UTC(2026, 0, 14, 8, 0))).toBeNull();
  });
});
