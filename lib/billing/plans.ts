/**
 * The plans a workspace can be on (docs/decisions/091-plans-and-credits.md): each sets the monthly conversation quota and the
 * credits included every calendar month. A plan is bought through a payment provider (lib/billing/payments.ts: the
 * price charged is the provider's) or recorded by the platform's operators (`agentctl billing plan`); `price` is what
 * the dashboard shows.
 */
export interface Plan {
  id: string;
  name: string;
  monthly_conversations: number;
  monthly_credits: number;
  /** As shown; informative only. */
  price: string;
}

export const PLANS = [
  { id: 'free', name: 'Free', monthly_conversations: 1_000, monthly_credits: 1_000, price: '$0' },
  { id: 'starter', name: 'Starter', monthly_conversations: 5_000, monthly_credits: 10_000, price: '$49 a month' },
  { id: 'pro', name: 'Pro', monthly_conversations: 25_000, monthly_credits: 50_000, price: '$199 a month' },
  { id: 'business', name: 'Business', monthly_conversations: 100_000, monthly_credits: 250_000, price: '$799 a month' },
] as const satisfies readonly Plan[];

export type PlanId = (typeof PLANS)[number]['id'];

export const DEFAULT_PLAN: PlanId = 'free';

export function planOf(id: string): Plan {
  return PLANS.find((p) => p.id === id) ?? PLANS[0];
}

export function isPlanId(id: string): id is PlanId {
  return PLANS.some((p) => p.id === id);
}
