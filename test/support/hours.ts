/** Business hours for tests (lib/bots/hours.ts). */

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Every day of the week, as the settings name them. */
export const ALL_DAYS = [...DAYS];

/**
 * Hours that are closed now: tomorrow (UTC) only, nine to five — with when the team is back and the words the
 * visitor reads for it.
 */
export function closedUntilTomorrow() {
  const tomorrow = new Date(Date.now() + 86_400_000);
  const backAt = Date.UTC(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth(), tomorrow.getUTCDate(), 9, 0);
  return {
    hours: { time_zone: 'UTC', open: [{ days: [DAYS[tomorrow.getUTCDay()]], from: '09:00', to: '17:00' }] },
    backAt,
    words: `Our team is away until ${WEEKDAY_NAMES[tomorrow.getUTCDay()]} at 09:00 (UTC).`,
  };
}
