import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Temporal } from '../lib/temporal';
import { maintenanceWorkflow } from '../workflows/maintenance';
import { MAINTENANCE_SCHEDULE_ID } from '../workflows/contracts/maintenance';

/** Creates the platform's own schedules once; an existing one is left as it is (it may have been paused by ops). */
export async function ensurePlatformSchedules(t: Temporal): Promise<void> {
  try {
    await t.client.schedule.create({
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: '5 minutes' }] },
      action: { type: 'startWorkflow', workflowType: maintenanceWorkflow, taskQueue: t.taskQueue, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
