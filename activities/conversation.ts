import { type BriefingDeps, briefing } from '../lib/conversations/briefing';
import { applyTransition } from '../lib/conversations/transitions';
import type { Db } from '../lib/db';
import type { TransitionInput } from '../workflows/contracts/conversation';

export interface ConversationDeps extends BriefingDeps {
  db: Db;
}

/**
 * The conversation workflow's writes to its read model in Postgres, one transaction per transition; a hand-over to
 * the team first writes the operator's briefing (the model's, charged to the workspace, or an extractive one).
 */
export function createConversationActivities(deps: ConversationDeps) {
  return {
    applyTransition(input: TransitionInput): Promise<{ deliveryId: string | null }> {
      return applyTransition(deps.db, input, { brief: (lines, use) => briefing(deps, lines, use) });
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
