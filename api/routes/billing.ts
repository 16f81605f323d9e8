import type { AppDeps } from '../deps';
import { type RouteDef, route } from '../route';
import { PageQuery } from '../../lib/schemas/common';
import { LedgerList, PlanList, UsageQuery, UsageView } from '../../lib/schemas/billing';
import { sessionUser } from '../session';

/**
 * `/v1/billing/*` (docs/decisions.md, "Billing"): what owners and admins see of plans, usage and credits. No payment
 * provider is connected: plans and top-ups are recorded with `agentctl billing`.
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
        ctx.body = { plans: billing.plans(), current: usage.plan.id };
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
        ctx.body = await billing.usage(sessionUser(ctx).workspaceId, query.days);
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
        ctx.body = await billing.ledger(sessionUser(ctx).workspaceId, query);
      },
    }),
  ];
}
