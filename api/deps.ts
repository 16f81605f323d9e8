import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import type { Logger } from '../lib/logger';
import type { Metrics } from '../lib/metrics';
import type { Services } from '../lib/services';
import type { Temporal } from '../lib/temporal';

/** What the Koa app is built from (api/server.ts builds it; tests may build their own). */
export interface AppDeps {
  config: Config;
  /** For the cross-cutting middleware: key checks, rate windows, idempotency records. */
  db: Db;
  /** For the readiness probe. */
  temporal: Temporal;
  logger: Logger;
  metrics: Metrics;
  /** Every resource's domain operations: the only thing routes call. */
  services: Services;
}
