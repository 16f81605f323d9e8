import { type Db, withTransaction } from '../db';
import { LIMITS } from '../limits';

/**
 * Refused origins kept per bot: anyone may send any `Origin` with a public key, so what one bot keeps of them is
 * bounded. An origin the bot allows is always kept (there are at most `LIMITS.widget.allowedOrigins` of those).
 */
export const SIGHTINGS_PER_BOT = LIMITS.widget.refusedSightingsPerBot;
/** Each API process writes a bot's origin at most this often: a sighting is news, not a request log. */
const SIGHTING_INTERVAL_MS = 60_000;
/** (bot, origin, allowed) an API process remembers as written: the least recently seen is forgotten first. */
const SIGHTINGS_REMEMBERED = 10_000;
/** Sightings waiting for the next write; more are dropped until it is done (the next request notes them again). */
const PENDING_MAX = 1_000;
/** Sightings noted this close together are written by one transaction. */
const FLUSH_DELAY_MS = 200;

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
 * Whether `origin` is one a browser page sends, and one a bot could allow: `http(s)://host[:port]` in the form
 * browsers serialize it, at most `LIMITS.widget.originChars` long. Only those are noted ("null", made-up text and
 * other schemes are not a site the owner could allow).
 */
function isSiteOrigin(origin: string): boolean {
  if (origin.length > LIMITS.widget.originChars) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin;
  } catch {
    return false;
  }
}

/** The freshness test of a sighting row `s`: seen within the kept period (`$days`). */
const fresh = (days: string) =>
  `GREATEST(s.last_allowed_at, s.last_refused_at) > now() - make_interval(days => ${days})`;

interface Pending {
  botId: string;
  origin: string;
  allowed: boolean;
  refused: boolean;
}

/**
 * Where a bot's widget runs and where it was refused (docs/decisions/134-widget-preflight-budget.md): the widget's
 * middleware notes each page origin it serves or refuses once the request is within its rate window, and the dashboard
 * lists those seen in the last `LIMITS.widget.sightingsKeptDays` days, so an owner whose widget says "not available on
 * this page" sees which address to allow. Noting is off the request's path: at most one write a minute per bot and
 * origin per process, gathered and written by one transaction at a time per process (never a connection per request),
 * a failure only logged.
 */
export function createWidgetSightings(deps: { db: Db; onError?: (err: unknown) => void }) {
  /** When each (bot, origin, allowed) was last written, least recently seen first (Map keeps insertion order). */
  const written = new Map<string, number>();
  const pending = new Map<string, Pending>();
  let flushing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  /**
   * Writes what is pending in one transaction, under each bot's advisory lock (taken in the order of their keys, so two
   * processes' writes do not deadlock): expired sightings of those bots are removed, allowed origins are kept, refused ones are
   * updated or added while the bot keeps fewer than SIGHTINGS_PER_BOT (concurrent writers cannot overshoot).
   */
  async function write(batch: Pending[]): Promise<void> {
    const bots = [...new Set(batch.map((p) => p.botId))];
    const allowed = batch.filter((p) => p.allowed);
    const refused = batch.filter((p) => p.refused);
    await withTransaction(deps.db, async (tx) => {
      await tx.query(
        `SELECT pg_advisory_xact_lock(hashtext('widget_sightings'), h)
           FROM (SELECT DISTINCT hashtext(b) AS h FROM unnest($1::text[]) b ORDER BY 1) locks`,
        [bots],
      );
      await tx.query(`DELETE FROM widget_sightings s WHERE s.bot_id = ANY($1) AND NOT ${fresh('$2')}`, [
        bots,
        LIMITS.widget.sightingsKeptDays,
      ]);
      if (allowed.length) {
        await tx.query(
          `INSERT INTO widget_sightings (bot_id, origin, last_allowed_at)
           SELECT t.bot_id, t.origin, now() FROM unnest($1::text[], $2::text[]) AS t(bot_id, origin)
           ON CONFLICT (bot_id, origin) DO UPDATE SET last_allowed_at = now()`,
          [allowed.map((p) => p.botId), allowed.map((p) => p.origin)],
        );
      }
      if (refused.length) {
        const [botIds, origins] = [refused.map((p) => p.botId), refused.map((p) => p.origin)];
        await tx.query(
          `UPDATE widget_sightings s SET last_refused_at = now()
             FROM unnest($1::text[], $2::text[]) AS t(bot_id, origin)
            WHERE s.bot_id = t.bot_id AND s.origin = t.origin`,
          [botIds, origins],
        );
        // New refused origins, in the order they were noted, while their bot has room.
        await tx.query(
          `INSERT INTO widget_sightings (bot_id, origin, last_refused_at)
           SELECT n.bot_id, n.origin, now()
             FROM (SELECT t.bot_id, t.origin, row_number() OVER (PARTITION BY t.bot_id ORDER BY t.i) AS rank
                     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(bot_id, origin, i)
                    WHERE NOT EXISTS (SELECT 1 FROM widget_sightings s WHERE s.bot_id = t.bot_id AND s.origin = t.origin)) n
            WHERE n.rank <= $3 - (SELECT count(*) FROM widget_sightings s
                                   WHERE s.bot_id = n.bot_id AND s.last_allowed_at IS NULL)
           ON CONFLICT (bot_id, origin) DO NOTHING`,
          [botIds, origins, SIGHTINGS_PER_BOT],
        );
      }
    });
  }

  function flush(): void {
    timer = null;
    if (flushing || pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    flushing = write(batch)
      .catch((err: unknown) => {
        // Not written: the next request from these origins tries again.
        for (const p of batch) {
          if (p.allowed) written.delete(`${p.botId} ${p.origin} true`);
          if (p.refused) written.delete(`${p.botId} ${p.origin} false`);
        }
        deps.onError?.(err);
      })
      .finally(() => {
        flushing = null;
        if (pending.size) schedule();
      });
  }

  function schedule(): void {
    timer ??= setTimeout(flush, FLUSH_DELAY_MS);
    timer.unref();
  }

  return {
    /** Notes that a page of `origin` was served (`allowed`) or refused the bot's widget; only site origins are kept. */
    note(botId: string, origin: string, allowed: boolean): void {
      if (!isSiteOrigin(origin)) return;
      const key = `${botId} ${origin} ${allowed}`;
      const now = Date.now();
      const at = written.get(key);
      if (at !== undefined) {
        written.delete(key);
        if (now - at < SIGHTING_INTERVAL_MS) {
          written.set(key, at);
          return;
        }
      }
      const id = `${botId} ${origin}`;
      const entry = pending.get(id);
      if (!entry && pending.size >= PENDING_MAX) return;
      written.set(key, now);
      if (written.size > SIGHTINGS_REMEMBERED) written.delete(written.keys().next().value!);
      if (entry) entry[allowed ? 'allowed' : 'refused'] = true;
      else pending.set(id, { botId, origin, allowed, refused: !allowed });
      schedule();
    },

    /** The bot's sites seen within the kept period, the most recently seen first. */
    async list(botId: string): Promise<WidgetSite[]> {
      const res = await deps.db.query<WidgetSite>(
        `SELECT s.origin, s.origin = ANY(b.allowed_origins) AS allowed,
                (extract(epoch FROM s.last_allowed_at) * 1000)::bigint AS last_allowed_at,
                (extract(epoch FROM s.last_refused_at) * 1000)::bigint AS last_refused_at
           FROM widget_sightings s JOIN bots b ON b.id = s.bot_id
          WHERE s.bot_id = $1 AND ${fresh('$2')}
          ORDER BY GREATEST(s.last_allowed_at, s.last_refused_at) DESC, s.origin`,
        [botId, LIMITS.widget.sightingsKeptDays],
      );
      return res.rows;
    },
  };
}

export type WidgetSightings = ReturnType<typeof createWidgetSightings>;
