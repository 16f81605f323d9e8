import { type BriefingDeps, briefing } from '../lib/conversations/briefing';
import { applyTransition } from '../lib/conversations/transitions';
import type { Db } from '../lib/db';
import type { TransitionInput } from '../workflows/contracts/conversation';
import type { DeliverySchedule } from '../workflows/contracts/webhook-delivery';

export interface ConversationDeps extends BriefingDeps {
  db: Db;
  /** When a failed webhook delivery is tried again (WEBHOOK_RETRY_FIRST_MS); without it, the contract's 1, 5, 25 s. */
  deliverySchedule?: DeliverySchedule;
}

/**
 * The conversation workflow's writes to its read model in Postgres, one transaction per transition; a hand-over to
 * the team first writes the operator's briefing (the model's, charged to the workspace, or an extractive one).
 */
export function createConversationActivities(deps: ConversationDeps) {
  return {
    /** The delivery it recorded comes back with its schedule: the workflow that starts it cannot read settings. */
    async applyTransition(
      input: TransitionInput,
    ): Promise<{ deliveryId: string | null; deliverySchedule?: DeliverySchedule }> {
      const done = await applyTransition(deps.db, input, { brief: (lines, use) => briefing(deps, lines, use) });
      return done.deliveryId && deps.deliverySchedule ? { ...done, deliverySchedule: deps.deliverySchedule } : done;
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
