import { patched, proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance';

// Plain deletes on indexed columns, and a bounded batch of Temporal calls: a minute is generous, and the next
// scheduled run retries anyway.
const { expireStaleRecords, convergeWrites, runPeriodicWork } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/**
 * Housekeeping, run by a Temporal Schedule every few minutes: removes expired idempotency keys, old rate windows and
 * expired cached answers,
 * and converges writes that span Postgres and Temporal (Schedules behind their rows, decisions not delivered).
 */
export async function maintenanceWorkflow(): Promise<{
  idempotencyKeys: number;
  rateWindows: number;
  cachedAnswers: number;
  converged: { triggers: number; scans: number; approvals: number };
  periodic?: { creditGrants: number; expiredMedia?: number; conversationTallies?: number };
}> {
  const expired = await expireStaleRecords();
  const converged = await convergeWrites();
  // Added after release: a run that started before it replays without the step.
  if (!patched(PERIODIC_WORK)) return { ...expired, converged };
  const periodic = await runPeriodicWork();
  return { ...expired, converged, periodic };
}

/** Patch id: the monthly included credits and the pairing sweep joined the housekeeping. */
const PERIODIC_WORK = 'periodic-work';
