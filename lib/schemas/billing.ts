import { z } from 'zod';

export const PlanView = z
  .object({
    id: z.string(),
    name: z.string(),
    monthly_conversations: z.number().int(),
    monthly_credits: z.number().int().describe('Credits granted at the start of every calendar month'),
    price: z.string().describe('As shown; what is charged is the payment provider’s price for the plan'),
  })
  .meta({ id: 'Plan' });
export const PlanList = z
  .object({
    plans: z.array(PlanView),
    current: z.string(),
    checkout: z
      .array(z.string())
      .describe(
        'Plans that can be bought here (`POST /v1/billing/checkout`); empty without a payment provider, or when paid already',
      ),
    paid: z
      .boolean()
      .describe('The workspace pays for its plan through the payment provider (the operators change it)'),
  })
  .meta({ id: 'PlanList' });

export const UsageQuery = z.object({
  days: z.coerce
    .number({ error: 'must be an integer' })
    .int()
    .min(1)
    .max(90)
    .default(30)
    .describe('Days of daily figures, ending today (1–90, default 30)'),
});

export const UsageView = z
  .object({
    plan: PlanView,
    period: z.object({ start: z.number().int(), end: z.number().int() }).describe('This calendar month (Unix ms)'),
    conversations: z.object({
      used: z.number().int().describe('Conversations started this month'),
      quota: z.number().int().describe('This month’s quota, top-ups included; new conversations stop at it'),
      included: z.number().int().describe('The workspace’s monthly quota'),
      topped_up: z.number().int(),
    }),
    credits: z.object({ balance: z.number().int(), used_this_period: z.number().int() }),
    topups: z.array(
      z.object({
        kind: z.enum(['conversations', 'credits']),
        amount: z.number().int(),
        note: z.string().nullable(),
        created_at: z.number().int(),
      }),
    ),
    daily: z.array(z.object({ date: z.string(), conversations: z.number().int(), credits: z.number().int() })),
  })
  .meta({ id: 'Usage' });

export const LedgerList = z
  .object({
    entries: z.array(
      z.object({
        id: z.string(),
        amount: z.number().int().describe('+ a grant or top-up, − a run’s charge'),
        reason: z.string(),
        run_id: z.string().nullable(),
        created_at: z.number().int(),
      }),
    ),
    next_cursor: z.string(),
  })
  .meta({ id: 'Ledger' });

export const CheckoutRequest = z
  .object({
    plan: z.string({ error: 'is required' }).min(1).max(32).describe('The plan to buy (`GET /v1/billing/plans`)'),
  })
  .meta({ id: 'CheckoutRequest' });
export const CheckoutStarted = z
  .object({ url: z.string().describe("The payment provider's checkout page: send the person there") })
  .meta({ id: 'CheckoutStarted' });
export const PaymentEventReceived = z.object({ received: z.literal(true) }).meta({ id: 'PaymentEventReceived' });
