import type { DeliverySentAgainView, FailedDeliveryView } from '../../../shared/contract';
import { call, seg } from './client';

/** An agent's webhook deliveries given up, and sending one again: `/v1/dashboard/bots/{id}/deliveries…`. */

export type FailedDelivery = FailedDeliveryView;

const deliveries = (bot: string) => `/v1/dashboard/bots/${seg(bot)}/deliveries`;

export const deliveriesApi = {
  failed: (bot: string) => call<{ deliveries: FailedDelivery[] }>('GET', `${deliveries(bot)}/failed`),
  sendAgain: (bot: string, id: string) =>
    call<DeliverySentAgainView>('POST', `${deliveries(bot)}/${seg(id)}/send-again`),
};
