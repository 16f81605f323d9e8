import type { Db } from '../db';
import type { SecretBox } from '../secret-box';
import type { Temporal } from '../temporal';

/**
 * What every trigger operation runs on: built once by `lib/services.ts` and handed to each operation as its first
 * argument (`lib/triggers/service.ts` binds them for the routes, the builder and the worker).
 */
export interface TriggerDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  turnTimeoutMs: number;
  /** Shortest interval of schedule and poll triggers (TRIGGER_MIN_INTERVAL_SECONDS). */
  minIntervalSeconds: number;
}
