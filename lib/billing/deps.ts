import type { Db } from '../db';
import type { PaymentProvider } from './payments';

/**
 * What every billing operation runs on: built by `createBillingService` (lib/billing/service.ts) and handed to each
 * operation as its first argument.
 */
export interface BillingDeps {
  db: Db;
  /** The payment provider plans are bought through; null when none is configured (operators record plans). */
  payments: PaymentProvider | null;
  /** How far behind now the tally counts (TALLY_LAG_MS in lib/billing/monthly.ts unless set). */
  tallyLagMs: number;
}
