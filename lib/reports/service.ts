import type { Db } from '../db';
import { errors } from '../errors';
import type { KnowledgeService } from '../knowledge/service';
import { type QuestionGroup, listGaps, markAnswered } from './gaps';
import { type ResolutionQuery, type ResolutionReport, resolutionReport } from './resolution';
import { type SourceUsefulness, sourceUsefulness } from './usefulness';

/**
 * The owner's reports (issue 21: what is missing, what the AI resolved): read from what turns, ratings and hand-overs
 * recorded in Postgres; nothing here writes but "add an answer", which is an ordinary knowledge write.
 */
export function createReportsService(deps: { db: Db; knowledge: KnowledgeService }) {
  return {
    /** The questions the agent could not answer in the last `days`, grouped; answered ones leave the list. */
    gaps(botId: string, days: number): Promise<QuestionGroup[]> {
      return listGaps(deps.db, botId, days);
    },

    /**
     * "Add an answer": writes a knowledge source (indexed at once, the answer cache reset as for any write) and marks
     * the group's questions as answered by it. 409 when none of them is an open question of this bot any more (the
     * answer is then not written: someone answered it meanwhile).
     */
    async answerGap(
      botId: string,
      input: { run_ids: string[]; title?: string; text: string },
    ): Promise<{ source_id: string; answered: number }> {
      const open = await deps.db.query(
        `SELECT 1 FROM runs WHERE bot_id = $1 AND id = ANY($2::text[]) AND unanswered IS NOT NULL AND gap_source_id IS NULL
          LIMIT 1`,
        [botId, input.run_ids],
      );
      if (!open.rowCount) throw errors.conflict('These questions were answered already, or are not this agent’s');
      const { source_id } = await deps.knowledge.write(botId, { title: input.title, text: input.text });
      const answered = await markAnswered(deps.db, botId, input.run_ids, source_id);
      return { source_id, answered };
    },

    /** Each knowledge source with how often answers used it and how they were rated, in the last `days`. */
    usefulness(botId: string, days: number): Promise<SourceUsefulness[]> {
      return sourceUsefulness(deps.db, botId, days);
    },

    resolution(query: ResolutionQuery): Promise<ResolutionReport> {
      return resolutionReport(deps.db, query);
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
