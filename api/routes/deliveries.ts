import type { AppDeps } from '../deps';
import { type RouteDef, route, DASHBOARD_ROUTE, SESSION_ERRORS } from '../route';
import { BotParams } from '../../lib/schemas/common';
import { DeliveryParams, DeliverySentAgain, FailedDeliveryList } from '../../lib/schemas/deliveries';
import { sessionBot } from '../session';

/**
 * An agent's outgoing webhook deliveries that were given up, and sending one again (the agent's page; the owner and
 * admins, who see the webhook address): docs/decisions/144-failed-deliveries-told.md.
 */
export function deliveryRoutes(deps: AppDeps): RouteDef[] {
  const { deliveries } = deps.services;
  const common = DASHBOARD_ROUTE;
  const errs = SESSION_ERRORS;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/deliveries/failed',
      operationId: 'dashboardFailedDeliveries',
      summary: "The agent's webhook deliveries given up lately (after the last retry, or a final 4xx), newest first.",
      params: BotParams,
      responses: { 200: { description: 'Deliveries given up', schema: FailedDeliveryList } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        ctx.set('Cache-Control', 'no-store');
        return { deliveries: await deliveries.failed(bot.id) };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/deliveries/{delivery}/send-again',
      operationId: 'dashboardSendDeliveryAgain',
      summary:
        'Sends a delivery given up again: a new delivery of the same body to the current webhook address, signed afresh, with the same retries.',
      description:
        '409 `conflict` when the delivery did not fail, is being or was sent again already, or the agent has no webhook address.',
      params: DeliveryParams,
      responses: { 202: { description: 'Sending again', schema: DeliverySentAgain } },
      errors: [...errs, 'conflict'],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await deliveries.sendAgain(bot.id, params.delivery);
      },
    }),
  ];
}
