import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import type { Db } from '../db';
import type { PassageView } from '../knowledge/retrieve';
import { LIMITS } from '../limits';
import { answerMessageId } from './bookkeeping';
import { type Temporal, workflowUiUrl } from '../temporal';

/** The run log (contract: `GET /v1/dashboard/bots/{id}/runs`): every wake-up of an agent, newest first. */
export function createRunService(deps: { db: Db; temporal: Pick<Temporal, 'uiUrl' | 'namespace'> }) {
  return {
    /** One page of the bot's runs, each with a link to its workflow in the Temporal UI. */
    async list(botId: string, page: { limit: number; cursor?: string }) {
      const after = page.cursor ? decodeCursor(page.cursor, CURSORS.runs) : undefined;
      const res = await deps.db.query(
        `SELECT id, status, skipped_reason, trigger_kind, trigger_id, session_id, workflow_id, input, answer, error_code, error, model,
                prompt_tokens, completion_tokens, credits,
                (extract(epoch FROM started_at) * 1000)::bigint AS started_ms, (extract(epoch FROM finished_at) * 1000)::bigint AS finished_ms,
                started_at::text AS started_key
           FROM runs WHERE bot_id = $1 AND ($2::timestamptz IS NULL OR (started_at, id) < ($2::timestamptz, $3::text))
          ORDER BY started_at DESC, id DESC LIMIT $4`,
        [botId, after?.t ?? null, after?.i ?? null, page.limit + 1],
      );
      const rows = res.rows.slice(0, page.limit);
      return {
        runs: rows.map((r) => ({
          run_id: r.id as string,
          status: (r.skipped_reason ? 'skipped' : r.status) as string,
          trigger_kind: r.trigger_kind as string,
          trigger_id: r.trigger_id as string | null,
          session_id: r.session_id as string | null,
          input: r.input as string,
          answer: r.answer as string | null,
          error_code: (r.error_code ?? r.skipped_reason ?? null) as string | null,
          error: r.error as string | null,
          model: r.model as string | null,
          prompt_tokens: r.prompt_tokens as number,
          completion_tokens: r.completion_tokens as number,
          credits: r.credits as number,
          started_at: Number(r.started_ms),
          finished_at: r.finished_ms === null ? null : Number(r.finished_ms),
          workflow_url: workflowUiUrl(deps.temporal, r.workflow_id),
        })),
        next_cursor:
          res.rows.length > page.limit ? encodeCursor({ t: rows.at(-1)!.started_key, i: rows.at(-1)!.id }) : '',
      };
    },

    /**
     * The passages each answer of one conversation of the bot read, newest first (the test chat shows them under its
     * answers; docs/decisions/153-see-what-the-agent-reads.md). Runs before they were kept have none.
     */
    async passagesRead(botId: string, sessionId: string) {
      const res = await deps.db.query<{
        id: string;
        input: string;
        searched_with: string | null;
        passages: PassageView[] | null;
        started_ms: string;
      }>(
        `SELECT id, input, searched_with, passages, (extract(epoch FROM started_at) * 1000)::bigint AS started_ms
           FROM runs WHERE session_id = $2 AND bot_id = $1 AND trigger_kind = 'message' AND status = 'done'
          ORDER BY started_at DESC, id DESC LIMIT $3`,
        [botId, sessionId, LIMITS.passagesReadListed],
      );
      return {
        answers: res.rows.map((r) => ({
          run_id: r.id,
          message_id: answerMessageId(r.id),
          question: r.input,
          searched_with: r.searched_with,
          passages: r.passages ?? [],
          started_at: Number(r.started_ms),
        })),
      };
    },
  };
}

export type RunService = ReturnType<typeof createRunService>;
