import { type Db, withTransaction } from '../db';

/** Origins kept per bot: anyone may send any `Origin` with a public key, so what one bot keeps is bounded. */
export const SIGHTINGS_PER_BOT = 50;
/** Each API process writes a bot's origin at most this often: a sighting is news, not a request log. */
export const SIGHTING_INTERVAL_MS = 60_000;

export interface WidgetSite {
  origin: string;
  /** Whether the bot's allowed sites include it now (it may have been added since it was refused). */
  allowed: boolean;
  /** Unix milliseconds of the last request from it the widget served, or null. */
  last_allowed_at: number | null;
  /** Unix milliseconds of the last one refused (`origin_not_allowed`, or a preflight answered without CORS), or null. */
  last_refused_at: number | null;
}

/**
 * Where a bot's widget runs and where it was refused (docs/decisions/102-widget-sightings.md): the widget's
 * middleware notes each page origin it serves or refuses, and the dashboard lists them, so an owner whose widget says
 * "not available on this page" sees which address to allow. Noting is off the request's path: at most one write a
 * minute per bot and origin per process, never awaited, a failure only logged.
 */
export function createWidgetSightings(deps: { db: Db; onError?: (err: unknown) => void }) {
  const written = new Map<string, number>();

  /** An origin already kept is updated; a new one is added, under the bot's lock, only while the bot has room. */
  async function write(botId: string, origin: string, allowed: boolean): Promise<void> {
    const seen = `last_allowed_at = CASE WHEN $3 THEN now() ELSE s.last_allowed_at END,
                  last_refused_at = CASE WHEN NOT $3 THEN now() ELSE s.last_refused_at END`;
    const updated = await deps.db.query(
      `UPDATE widget_sightings AS s SET ${seen} WHERE s.bot_id = $1 AND s.origin = $2`,
      [botId, origin, allowed],
    );
    if (updated.rowCount) return;
    await withTransaction(deps.db, async (tx) => {
      // Concurrent first sightings of a bot would each count room for themselves.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('widget_sightings'), hashtext($1))`, [botId]);
      await tx.query(
        `INSERT INTO widget_sightings AS s (bot_id, origin, last_allowed_at, last_refused_at)
         SELECT $1, $2, CASE WHEN $3 THEN now() END, CASE WHEN NOT $3 THEN now() END
          WHERE (SELECT count(*) FROM widget_sightings WHERE bot_id = $1) < $4
         ON CONFLICT (bot_id, origin) DO UPDATE SET ${seen}`,
        [botId, origin, allowed, SIGHTINGS_PER_BOT],
      );
    });
  }

  return {
    note(botId: string, origin: string, allowed: boolean): void {
      const key = `${botId} ${origin} ${allowed}`;
      const now = Date.now();
      if (now - (written.get(key) ?? 0) < SIGHTING_INTERVAL_MS) return;
      written.set(key, now);
      if (written.size > 10_000) {
        for (const [k, at] of written) if (now - at >= SIGHTING_INTERVAL_MS) written.delete(k);
      }
      write(botId, origin, allowed).catch((err: unknown) => {
        // Not written: the next request from this origin tries again.
        written.delete(key);
        deps.onError?.(err);
      });
    },

    /** The bot's sites, the most recently seen first. */
    async list(botId: string): Promise<WidgetSite[]> {
      const res = await deps.db.query<WidgetSite>(
        `SELECT s.origin, s.origin = ANY(b.allowed_origins) AS allowed,
                (extract(epoch FROM s.last_allowed_at) * 1000)::bigint AS last_allowed_at,
                (extract(epoch FROM s.last_refused_at) * 1000)::bigint AS last_refused_at
           FROM widget_sightings s JOIN bots b ON b.id = s.bot_id
          WHERE s.bot_id = $1
          ORDER BY GREATEST(s.last_allowed_at, s.last_refused_at) DESC, s.origin`,
        [botId],
      );
      return res.rows;
    },
  };
}

export type WidgetSightings = ReturnType<typeof createWidgetSightings>;
