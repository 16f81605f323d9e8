import type { Db } from '../lib/db';

export interface MaintenanceDeps {
  db: Db;
}

/**
 * Housekeeping the spec's limits imply: idempotency keys are kept 24 hours, rate windows one minute. Each
 * statement is idempotent, so a retried activity is harmless.
 */
export function createMaintenanceActivities({ db }: MaintenanceDeps) {
  return {
    async expireStaleRecords(): Promise<{ idempotencyKeys: number; rateWindows: number }> {
      const idem = await db.query(`DELETE FROM idempotency_keys WHERE expires_at < now()`);
      // Windows older than two minutes can no longer be the current one for any request.
      const rate = await db.query(`DELETE FROM rate_windows WHERE window_start < now() - interval '2 minutes'`);
      return { idempotencyKeys: idem.rowCount ?? 0, rateWindows: rate.rowCount ?? 0 };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
