import type { AppDeps } from '../deps';
import { type RouteDef, route } from '../route';
import { PageQuery } from '../../lib/schemas/common';
import {
  CheckoutRequest,
  CheckoutStarted,
  LedgerList,
  PaymentEventReceived,
  PlanList,
  UsageQuery,
  UsageView,
} from '../../lib/schemas/billing';
import { dashboardLinkBase, sessionUser } from '../session';

/**
 * `/v1/billing/*` (docs/decisions/091-plans-and-credits.md, 092-paying-for-a-plan.md): what owners and admins see of plans, usage and
 * credits, a plan bought through the payment provider's checkout when one is configured, and its webhook. Without a
 * provider, plans and top-ups are recorded with `agentctl billing`.
 */
export function billingRoutes(deps: AppDeps): RouteDef[] {
  const { billing } = deps.services;
  const common = { tag: 'Billing', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'forbidden', 'bad_request', 'service_unavailable'] as const;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/billing/plans',
      operationId: 'billingPlans',
      summary: 'The plans (monthly conversations, included credits, price) and the workspace’s current one.',
      responses: { 200: { description: 'Plans', schema: PlanList } },
      errors: [...errs],
      handler: async (ctx) => {
        const usage = await billing.usage(sessionUser(ctx).workspaceId, 1);
        const options = await billing.checkoutOptions(sessionUser(ctx).workspaceId);
        return { plans: billing.plans(), current: usage.plan.id, ...options };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/billing/usage',
      operationId: 'billingUsage',
      summary: 'This month’s conversations against the quota, credits, top-ups, and conversations and credits per day.',
      query: UsageQuery,
      responses: { 200: { description: 'Usage', schema: UsageView } },
      errors: [...errs],
      handler: async (ctx, { query }) => {
        ctx.set('Cache-Control', 'no-store');
        return await billing.usage(sessionUser(ctx).workspaceId, query.days);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/billing/checkout',
      operationId: 'billingCheckout',
      summary: "Opens the payment provider's checkout for a plan; the plan changes once the provider says it is paid.",
      description:
        'Answers the address of the checkout page. 409 `conflict` without a payment provider, or for the current plan.',
      body: CheckoutRequest,
      responses: { 200: { description: 'Checkout opened', schema: CheckoutStarted } },
      errors: [...errs, 'conflict'],
      handler: async (ctx, { body }) => {
        const user = sessionUser(ctx);
        const me = await deps.services.accounts.me(user);
        return await billing.startCheckout(
          { workspaceId: user.workspaceId, email: me.user.email },
          body.plan,
          `${dashboardLinkBase(deps)}/billing`,
        );
      },
    }),
    route({
      tag: 'Billing',
      unstable: true,
      method: 'post',
      path: '/v1/billing/webhooks/stripe',
      operationId: 'billingStripeWebhook',
      summary:
        "Stripe's events (signed with `Stripe-Signature`): a paid checkout sets the plan, an ended subscription sets Free.",
      description: 'Each event is handled once; 400 for a bad or stale signature, 404 without a payment provider.',
      rawBody: true,
      responses: { 200: { description: 'Received', schema: PaymentEventReceived } },
      errors: ['bad_request', 'not_found', 'service_unavailable'],
      handler: async (ctx) => {
        return await billing.handlePaymentEvent(ctx.state.rawBody ?? Buffer.alloc(0), ctx.headers);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/billing/ledger',
      operationId: 'billingLedger',
      summary: 'The credits ledger, newest first: grants and top-ups (+), run charges (−).',
      query: PageQuery,
      responses: { 200: { description: 'One page of the ledger', schema: LedgerList } },
      errors: [...errs],
      handler: async (ctx, { query }) => {
        return await billing.ledger(sessionUser(ctx).workspaceId, query);
      },
    }),
  ];
}
