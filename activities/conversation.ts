import { applyTransition } from '../lib/conversations/transitions';
import type { Db } from '../lib/db';
import type { TransitionInput } from '../workflows/contracts/conversation';

export interface ConversationDeps {
  db: Db;
}

/** The conversation workflow's writes to its read model in Postgres, one transaction per transition. */
export function createConversationActivities(deps: ConversationDeps) {
  return {
    applyTransition(input: TransitionInput): Promise<{ deliveryId: string | null }> {
      return applyTransition(deps.db, input);
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
