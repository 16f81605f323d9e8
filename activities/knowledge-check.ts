import { Context } from '@temporalio/activity';
import {
  existingSources,
  failRun,
  finishRun,
  judgeQuestion,
  pendingQuestions,
  recordResults,
} from '../lib/checks/store';
import type { Db } from '../lib/db';
import type { Passage } from '../lib/knowledge/retrieve';
import {
  CHECK_BATCH,
  type CheckBatchResult,
  type KnowledgeCheckInput,
  type KnowledgeCheckSummary,
} from '../workflows/contracts/knowledge-check';

export interface KnowledgeCheckDeps {
  db: Db;
  /**
   * The chat turn's own retrieval (worker/deps.ts): the passages a turn would get for this question, with the
   * question embedded when embeddings are on. The check judges what the agent would really read.
   */
  retrieve: (botId: string, query: string) => Promise<Passage[]>;
}

export function createKnowledgeCheckActivities(deps: KnowledgeCheckDeps) {
  return {
    /**
     * Checks the run's next unchecked questions (at most `CHECK_BATCH`) and records what each found with the run's
     * counters, which the dashboard shows as progress. A retry checks again only what is still unchecked.
     */
    async checkQuestions(input: KnowledgeCheckInput): Promise<CheckBatchResult> {
      const batch = await pendingQuestions(deps.db, input.runId, CHECK_BATCH);
      if (!batch.length) return { remaining: 0 };
      const found: Passage[][] = [];
      for (const q of batch) {
        found.push(await deps.retrieve(input.botId, q.question));
        Context.current().heartbeat();
      }
      // Asked after retrieval, so a source deleted while the batch ran is reported gone, not merely missed.
      const existing = await existingSources(
        deps.db,
        input.botId,
        batch.map((q) => q.expected_source_id),
      );
      const results = batch.map((q, i) => judgeQuestion(q, found[i], existing.has(q.expected_source_id)));
      return { remaining: await recordResults(deps.db, input.runId, results) };
    },

    /** Every question was checked: the run is done, its score final. */
    async finishCheck(input: KnowledgeCheckInput): Promise<KnowledgeCheckSummary> {
      const end = await finishRun(deps.db, input.runId);
      return end ? { status: 'done', ...end } : { status: 'gone', total: 0, found: 0 };
    },

    /** The run gave up: it says so, and why in a few words (the history and the worker's log have the rest). */
    async markCheckFailed(input: KnowledgeCheckInput, error: string): Promise<void> {
      await failRun(deps.db, input.runId, error);
    },
  };
}

export type KnowledgeCheckActivities = ReturnType<typeof createKnowledgeCheckActivities>;
