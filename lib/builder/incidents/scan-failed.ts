import type { Queryable } from '../../db';
import { type Incident, lastError, ms } from './kinds';

/** Only the latest scan of each address within this window counts: an address not scanned for a month is let go. */
const SCAN_DAYS = 30;
/**
 * A scan row still `scanning` but not updated for this long was left by a scan that stopped (terminated, timed out):
 * a live crawl updates its row after every page, and an attempt is bounded to an hour (workflows/site-scan.ts).
 */
const SCAN_STALE_HOURS = 2;

interface LatestScan {
  id: string;
  url: string;
  status: 'scanning' | 'done' | 'failed';
  error: string | null;
  at: Date;
  stale: boolean;
}

/** The latest scan of each address within the window; a stale `scanning` row is a scan that stopped. */
export async function readLatestScans(db: Queryable, agentId: string): Promise<LatestScan[]> {
  const res = await db.query<LatestScan>(
    `SELECT id, url, status, error, COALESCE(finished_at, updated_at) AS at,
            updated_at < now() - make_interval(hours => $3) AS stale
       FROM (SELECT DISTINCT ON (url) * FROM site_scans
              WHERE bot_id = $1 AND started_at > now() - make_interval(days => $2)
              ORDER BY url, started_at DESC, id) latest
      ORDER BY started_at, id`,
    [agentId, SCAN_DAYS, SCAN_STALE_HOURS],
  );
  return res.rows;
}

const stopped = (s: LatestScan) => s.status === 'scanning' && s.stale;

/** The scans still under way (`knowledge_empty` says one may fill the knowledge base). */
export function scansRunning(scans: LatestScan[]): number {
  return scans.filter((s) => s.status === 'scanning' && !stopped(s)).length;
}

/** `scan_failed`: the latest scan of an address failed, or stopped (`scanning` with no update for 2 hours). */
export function scanFailed(scans: LatestScan[]): Incident[] {
  return scans
    .filter((s) => s.status === 'failed' || stopped(s))
    .map((s): Incident => {
      const error = s.error ?? (stopped(s) ? 'The scan stopped without finishing' : null);
      return {
        kind: 'scan_failed',
        severity: 'warning',
        problem: `The scan of ${s.url} failed, so nothing from that address was added to the knowledge base.${lastError(error)}`,
        fix:
          'Check that the address opens from the internet and that its robots.txt does not block AgentPlatformBot, ' +
          'then ask me to scan it again.',
        builder_can_fix: true,
        since: ms(s.at),
        details: { scan_id: s.id, url: s.url, error, stopped: stopped(s) },
      };
    });
}
