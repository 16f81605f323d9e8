/** Dates, times and numbers as the pages write them. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export const formatDateTime = (ms: number) => dateTime.format(new Date(ms));
export const formatDate = (ms: number) => dateOnly.format(new Date(ms));

/** "3 min ago", "yesterday"; exact time in a tooltip via <Time>. */
export function formatRelative(ms: number, now = Date.now()): string {
  const seconds = Math.round((ms - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour');
  if (abs < 30 * 86_400) return relative.format(Math.round(seconds / 86_400), 'day');
  return formatDate(ms);
}

export function Time(props: { ms: number; relative?: boolean }) {
  const iso = new Date(props.ms).toISOString();
  return (
    <time dateTime={iso} title={formatDateTime(props.ms)}>
      {props.relative ? formatRelative(props.ms) : formatDateTime(props.ms)}
    </time>
  );
}

export const formatNumber = (n: number) => n.toLocaleString();
