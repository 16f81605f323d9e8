import { bindTo } from '../bind-deps';
import type { ScanDeps } from './deps';
import { resyncStale } from './schedules';
import { startScan } from './start';
import { cancelScan, stopAllOfBot } from './stop';
import { knownHosts, listRecentScans } from './views';

export type { ScanDeps } from './deps';
export { type ScanSchedule, scanScheduleId, setScanSchedule } from './schedules';
export { checkScanAddress } from './start';
export { hostOf } from './views';
export { runningScan, startSiteScan } from './workflow';

/**
 * Site scans (contract, Admin helpers → POST /v1/admin/scrape): starting one, its refresh Schedule, and its progress
 * as the dashboard shows it. The crawl itself is the siteScan workflow's activity (activities/site-scan.ts). Each
 * operation lives in its own module (`start.ts`, `stop.ts`, `schedules.ts`, `views.ts`; the workflow's start and
 * state in `workflow.ts`) as a function of the shared deps (`deps.ts`); here they are given the deps.
 */
export function createScanService(deps: ScanDeps) {
  const bound = bindTo(deps);
  return {
    knownHosts: bound(knownHosts),
    start: bound(startScan),
    stopAllOfBot: bound(stopAllOfBot),
    cancel: bound(cancelScan),
    resyncStale: bound(resyncStale),
    list: bound(listRecentScans),
  };
}

export type ScanService = ReturnType<typeof createScanService>;
