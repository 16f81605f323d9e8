import type { Db } from '../lib/db';
import { createMaintenanceActivities } from './maintenance';

/** Everything activities may use, built once by the worker (or the test harness) and injected. */
export interface ActivityDeps {
  db: Db;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createMaintenanceActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
