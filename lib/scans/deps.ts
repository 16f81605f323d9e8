import type { Db } from '../db';
import type { Temporal } from '../temporal';

/**
 * What every scan operation runs on: built once by `lib/services.ts` and handed to each operation as its first
 * argument (`lib/scans/service.ts` binds them for the routes, the builder and the maintenance workflow).
 */
export interface ScanDeps {
  db: Db;
  temporal: Temporal;
  /** Tests scan sites on loopback (SSRF_ALLOW_LOOPBACK); never in production. */
  allowLoopback: boolean;
}
