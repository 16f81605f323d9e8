import type { ModelCatalogue } from '../billing/models';
import type { Db } from '../db';
import type { SecretBox } from '../secret-box';

/**
 * What every bot and key operation runs on: built once by `lib/services.ts` and handed to each operation as its first
 * argument (`lib/bots/service.ts` binds them for the routes).
 */
export interface BotDeps {
  db: Db;
  secrets: SecretBox;
  /** The models agents may use on each plan (lib/billing/models.ts). */
  models: ModelCatalogue;
  /** What other resources hold of a bot outside Postgres's cascades (Schedules, running scans, files in a bucket). */
  beforeDelete: (botId: string) => Promise<void>;
}
