import type { ScanDeps } from './deps';
import { type ScanRun, listScans } from './runs';
import { runningScan } from './workflow';

/** What is known of a bot's scans: their progress as the dashboard shows it, and the sites the bot belongs with. */

/** Shown for a row left `scanning` by a run that is no longer running (terminated by ops, or timed out). */
const STOPPED = 'The scan stopped without finishing';

/**
 * The hosts an agent is known to belong with: those it scanned or re-reads, and the sites allowed to embed its
 * widget (lower-cased, without a leading `www.`). A scan elsewhere reads someone else's site into the agent.
 */
export async function knownHosts(deps: ScanDeps, botId: string): Promise<Set<string>> {
  const res = await deps.db.query<{ url: string }>(
    `SELECT url FROM site_scans WHERE bot_id = $1
     UNION SELECT url FROM scan_schedules WHERE bot_id = $1
     UNION SELECT unnest(allowed_origins) FROM bots WHERE id = $1`,
    [botId],
  );
  return new Set(res.rows.map((r) => hostOf(r.url)).filter((h): h is string => Boolean(h)));
}

/** The bot's recent scans with their progress, and whether one runs now. */
export async function listRecentScans(
  deps: ScanDeps,
  botId: string,
  limit: number,
): Promise<{ running: boolean; scans: ScanRun[] }> {
  // Temporal first, rows second: a row still `scanning` that is not the running run was left by a run that
  // stopped without its last word (terminated, timed out), unless it started after the check (clock margin).
  const checkedAt = Date.now();
  const running = await runningScan(deps.temporal, botId);
  const scans = await listScans(deps.db, botId, limit);
  const stopped = (s: ScanRun) => s.status === 'scanning' && s.id !== running && s.started_at < checkedAt - 10_000;
  return {
    running: running !== null,
    scans: scans.map((s) => (stopped(s) ? { ...s, status: 'failed' as const, error: s.error ?? STOPPED } : s)),
  };
}

/** The host of an address for comparing sites: lower-cased, without a leading `www.`; undefined if not a URL. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return undefined;
  }
}
