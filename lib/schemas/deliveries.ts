import { z } from 'zod';
import { BotParams } from './common';

/** A webhook delivery named in a dashboard path, under its agent. */
export const DeliveryParams = BotParams.extend({
  delivery: z.string().min(1).max(64).describe('Delivery id (`dlv_…`)'),
});

export const FailedDelivery = z
  .object({
    id: z.string(),
    event: z.string().describe('`escalated`, `visitor_message` or `resolved`'),
    session_id: z.string().nullable().describe('The conversation it was about'),
    url: z.string().describe('The address it was sent to'),
    attempts: z.number().int(),
    last_status: z.number().int().nullable().describe("The receiver's last HTTP status; null when it never answered"),
    last_error: z.string().nullable().describe('Why it was given up, e.g. `Receiver answered HTTP 503`'),
    created_at: z.number().int(),
    failed_at: z.number().int().describe('When it was given up'),
    sent_again: z
      .object({ id: z.string(), status: z.enum(['pending', 'delivered']) })
      .nullable()
      .describe('Sent again and not given up: under way, or delivered'),
  })
  .meta({ id: 'FailedDelivery' });

export const FailedDeliveryList = z
  .object({
    deliveries: z
      .array(FailedDelivery)
      .describe(
        'Given up in the last 30 days, newest first, 20 at most; one sent again that failed again is replaced by its new delivery',
      ),
  })
  .meta({ id: 'FailedDeliveryList' });

export const DeliverySentAgain = z
  .object({
    id: z.string().describe('The new delivery'),
    status: z.literal('pending'),
    resend_of: z.string().describe('The delivery it sends again'),
  })
  .meta({ id: 'DeliverySentAgain' });
