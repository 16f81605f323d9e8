import type { Db } from '../lib/db';
import { LIMITS } from '../lib/limits';

/**
 * Writes that span Postgres and Temporal, converged after the fact: a trigger and its Schedule, a scanned address
 * and its refresh Schedule, an approval decision and the workflow waiting for it. The worker injects the services
 * that own them (this file imports none: they start workflows).
 */
export interface Convergence {
  resyncTriggerSchedules(): Promise<number>;
  resyncScanSchedules(): Promise<number>;
  redeliverApprovals(): Promise<number>;
}

/** Periodic work of the services that own it (billing's monthly grants, expired pairings). */
export interface Periodic {
  grantIncludedCredits(): Promise<number>;
  /** Brings each workspace's tally of this month's conversations up to date (what a new conversation's quota reads). */
  tallyConversations(): Promise<number>;
  sweepPairings(): Promise<void>;
  /** Visitors' images past their retention (MEDIA_RETENTION_DAYS), from the bucket and the database. */
  expireMedia(): Promise<number>;
}

export interface MaintenanceDeps {
  db: Db;
  convergence: Convergence;
  periodic: Periodic;
}

export function createMaintenanceActivities({ db, convergence, periodic }: MaintenanceDeps) {
  return {
    /**
     * Each workspace's included credits for a new month (once per month: the billing service marks the month), the
     * tally of each workspace's conversations this month, pairings that expired (an approved key never collected is
     * revoked), and visitors' images past their retention.
     */
    async runPeriodicWork(): Promise<{ creditGrants: number; expiredMedia: number; conversationTallies: number }> {
      const creditGrants = await periodic.grantIncludedCredits();
      const conversationTallies = await periodic.tallyConversations();
      await periodic.sweepPairings();
      const expiredMedia = await periodic.expireMedia();
      return { creditGrants, expiredMedia, conversationTallies };
    },

    /**
     * Housekeeping the contract's limits imply: idempotency keys are kept 24 hours, rate windows one minute. Each
     * statement is idempotent, so a retried activity is harmless.
     */
    async expireStaleRecords(): Promise<{
      idempotencyKeys: number;
      rateWindows: number;
      cachedAnswers: number;
      turnStreams: number;
      loginThrottles: number;
      widgetSightings: number;
    }> {
      const idem = await db.query(`DELETE FROM idempotency_keys WHERE expires_at < now()`);
      // Windows older than two minutes can no longer be the current one for any request.
      const rate = await db.query(`DELETE FROM rate_windows WHERE window_start < now() - interval '2 minutes'`);
      // Expired answers are never read; removing them only keeps the table small.
      const cache = await db.query(`DELETE FROM answer_cache WHERE expires_at < now()`);
      // A turn's stream is read only by a retry of that turn, which comes within its turn budget (minutes at most):
      // an hour after its last claim nobody reads it. (Not the time of its last send: sends leave every indexed
      // column alone, so that they are HOT updates; migrations/1763803400000_turn_streams_hot_sends.sql.)
      const streams = await db.query(`DELETE FROM turn_streams WHERE claimed_at < now() - interval '1 hour'`);
      // Failures older than the longest slow-down are forgotten at the next attempt anyway (lib/accounts/sign-in.ts).
      const throttles = await db.query(
        `DELETE FROM login_throttle WHERE updated_at < now() - interval '1 day' AND COALESCE(locked_until, now()) <= now()`,
      );
      // The dashboard lists sightings of the kept period only (lib/widget/sightings.ts): older ones are never read.
      const sightings = await db.query(
        `DELETE FROM widget_sightings
          WHERE GREATEST(last_allowed_at, last_refused_at) < now() - make_interval(days => $1)`,
        [LIMITS.widget.sightingsKeptDays],
      );
      return {
        widgetSightings: sightings.rowCount ?? 0,
        turnStreams: streams.rowCount ?? 0,
        loginThrottles: throttles.rowCount ?? 0,
        idempotencyKeys: idem.rowCount ?? 0,
        rateWindows: rate.rowCount ?? 0,
        cachedAnswers: cache.rowCount ?? 0,
      };
    },

    /** Brings every lagging Schedule and undelivered decision in line with Postgres; returns how many of each. */
    async convergeWrites(): Promise<{ triggers: number; scans: number; approvals: number }> {
      return {
        triggers: await convergence.resyncTriggerSchedules(),
        scans: await convergence.resyncScanSchedules(),
        approvals: await convergence.redeliverApprovals(),
      };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
