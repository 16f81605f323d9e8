import { proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance';

// Plain deletes on indexed columns: a minute is generous, and the next scheduled run retries anyway.
const { expireStaleRecords } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** Removes expired idempotency keys and old rate windows; run by a Temporal Schedule every few minutes. */
export async function maintenanceWorkflow(): Promise<{ idempotencyKeys: number; rateWindows: number }> {
  return expireStaleRecords();
}
