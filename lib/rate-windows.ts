import type { Queryable } from './db';

/**
 * Fixed one-minute windows in Postgres (the `rate_windows` table the API's rate limits use), for counters other
 * than the API's key + IP groups: one round trip counts a request in every bucket named and returns each count.
 */
export async function countInWindows(
  db: Queryable,
  buckets: string[],
): Promise<{ bucket: string; count: number; reset: number }[]> {
  const res = await db.query<{ bucket: string; count: number; reset: number }>(
    `INSERT INTO rate_windows (bucket, window_start, count)
     SELECT b, date_trunc('minute', now()), 1 FROM unnest($1::text[]) AS b
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
     RETURNING bucket, count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS reset`,
    [buckets],
  );
  return res.rows;
}
