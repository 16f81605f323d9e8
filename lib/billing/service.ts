import { bindTo } from '../bind-deps';
import type { Db } from '../db';
import { checkoutOptions, handlePaymentEvent, startCheckout } from './checkout';
import type { BillingDeps } from './deps';
import { TALLY_LAG_MS, grantIncludedCredits, tallyConversations } from './monthly';
import { setPlan, topUp } from './plan-changes';
import type { PaymentProvider } from './payments';
import { PLANS, type Plan } from './plans';
import { ledger, usage } from './usage';

// The quota expression the conversation check reads, and the grant an e-mail confirmation makes (lib/accounts).
export { MONTHLY_QUOTA_SQL, conversationsThisMonthSql } from './quota';
export { grantMonthsIncludedCredits } from './monthly';
export type { LedgerEntry, Usage } from './usage';

/**
 * Billing (docs/decisions/091-plans-and-credits.md): plans, the month's usage and quota, the credits ledger, top-ups and the
 * included credits granted each month, and a plan paid through a payment provider (lib/billing/payments.ts) when one
 * is configured. Otherwise plans and top-ups are recorded by the platform's operators (agentctl).
 */
export function createBillingService(deps: {
  db: Db;
  payments?: PaymentProvider | null;
  /** How far behind now the tally counts (TALLY_LAG_MS unless set). */
  tallyLagMs?: number;
}) {
  const bound = bindTo<BillingDeps>({
    db: deps.db,
    payments: deps.payments ?? null,
    tallyLagMs: deps.tallyLagMs ?? TALLY_LAG_MS,
  });
  return {
    plans: (): readonly Plan[] => PLANS,
    usage: bound(usage),
    ledger: bound(ledger),
    setPlan: bound(setPlan),
    checkoutOptions: bound(checkoutOptions),
    startCheckout: bound(startCheckout),
    handlePaymentEvent: bound(handlePaymentEvent),
    topUp: bound(topUp),
    tallyConversations: bound(tallyConversations),
    grantIncludedCredits: bound(grantIncludedCredits),
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
