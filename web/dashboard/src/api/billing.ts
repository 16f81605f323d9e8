import type { LedgerEntry as LedgerEntryView, PlanView, UsageView } from '../../../shared/contract';
import { call, query } from './client';

/** The workspace's plan, usage and credit ledger, and buying a plan: `/v1/billing/*`. */

export type Plan = PlanView;
export type Usage = UsageView;
export type LedgerEntry = LedgerEntryView;

export const billingApi = {
  /** `checkout`: the plans that can be bought here (empty without a payment provider). */
  plans: () =>
    call<{ plans: Plan[]; current: string; checkout?: string[]; paid?: boolean }>('GET', '/v1/billing/plans'),
  /** Opens the payment provider's checkout for a plan: the page to send the person to. */
  checkout: (plan: string) => call<{ url: string }>('POST', '/v1/billing/checkout', { plan }),
  usage: (days = 30) => call<Usage>('GET', `/v1/billing/usage${query({ days })}`),
  ledger: (cursor?: string, limit = 20) =>
    call<{ entries: LedgerEntry[]; next_cursor: string }>('GET', `/v1/billing/ledger${query({ cursor, limit })}`),
};
