import { WorkflowNotFoundError } from '@temporalio/client';
import {
  type KnowledgeCheckInput,
  knowledgeCheckSearchAttributes,
  knowledgeCheckWorkflowId,
} from '../../workflows/contracts/knowledge-check';
import { knowledgeCheckWorkflow } from '../../workflows/knowledge-check';
import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { LIMITS } from '../limits';
import type { Temporal } from '../temporal';
import { type CheckOutcome, type CheckPassage, failRun } from './store';

/**
 * The owner's check of an agent (issue 41, item 7; docs/decisions/owner-check.md): test questions, each with the
 * knowledge source that should answer it, and runs of the check — one workflow per run, `knowledge-check/{bot}/{run}`,
 * that puts every question through the chat turn's retrieval (activities/knowledge-check.ts). One run at a time per
 * agent; runs are kept with their results, so the score's trend shows.
 */

export interface CheckServiceDeps {
  db: Db;
  temporal: Temporal;
}

export interface CheckQuestion {
  id: string;
  question: string;
  expected_source_id: string;
  /** null: the source no longer exists. */
  expected_source_title: string | null;
  note: string | null;
  created_at: number;
  updated_at: number;
}

export interface CheckRun {
  id: string;
  status: 'running' | 'done' | 'failed';
  total: number;
  checked: number;
  found: number;
  missing: number;
  score: number | null;
  error: string | null;
  started_at: number;
  finished_at: number | null;
  workflow_id: string;
}

export interface CheckResult {
  question_id: string;
  question: string;
  expected_source_id: string;
  expected_source_title: string | null;
  outcome: CheckOutcome | 'pending';
  rank: number | null;
  passages: CheckPassage[];
}

/** Shown for a run whose workflow is no longer running but never said how it ended (terminated by ops). */
const STOPPED = 'The check stopped without finishing';
/** A `running` row this young may be waiting for its workflow to start: it is not judged stopped. */
const START_MARGIN = `interval '10 seconds'`;

const MS = (column: string, as = column.replace(/^\w+\./, '')) =>
  `(extract(epoch FROM ${column}) * 1000)::bigint AS ${as}`;

const QUESTION_COLUMNS = `q.id, q.question, q.expected_source_id, s.title AS expected_source_title, q.note,
  ${MS('q.created_at')}, ${MS('q.updated_at')}`;

const RUN_COLUMNS = `id, bot_id, status, total, checked, found, missing, error, ${MS('started_at')}, ${MS('finished_at')}`;

type RunRow = Omit<CheckRun, 'score' | 'workflow_id'> & { bot_id: string };

function runView({ bot_id, ...row }: RunRow): CheckRun {
  return {
    ...row,
    score: row.status === 'done' ? row.found / row.total : null,
    workflow_id: knowledgeCheckWorkflowId(bot_id, row.id),
  };
}

const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' &&
  (err as { constraint?: string }).constraint === constraint;

export function createCheckService(deps: CheckServiceDeps) {
  const { db, temporal } = deps;

  async function question(botId: string, id: string): Promise<CheckQuestion> {
    const res = await db.query<CheckQuestion>(
      `SELECT ${QUESTION_COLUMNS} FROM check_questions q
         LEFT JOIN knowledge_sources s ON s.bot_id = q.bot_id AND s.source_id = q.expected_source_id
        WHERE q.bot_id = $1 AND q.id = $2`,
      [botId, id],
    );
    if (!res.rows[0]) throw errors.notFound('No test question with this id');
    return res.rows[0];
  }

  /** 400 naming the field when the agent has no such source (a source deleted later is the check's to report). */
  async function requireSource(botId: string, sourceId: string): Promise<void> {
    const res = await db.query(`SELECT 1 FROM knowledge_sources WHERE bot_id = $1 AND source_id = $2`, [
      botId,
      sourceId,
    ]);
    if (!res.rowCount) {
      throw errors.badRequest(`expected_source_id: this agent has no knowledge source "${sourceId}"`);
    }
  }

  const sameWording = (wording: string) =>
    errors.conflict(`The check already has the question "${wording}"; edit that one instead`);

  /** Whether the run's workflow is running now (a row left `running` by one that is not was stopped). */
  async function workflowRunning(botId: string, runId: string): Promise<boolean> {
    try {
      const description = await temporal.client.workflow.getHandle(knowledgeCheckWorkflowId(botId, runId)).describe();
      return description.status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /**
   * A run left `running` by a workflow that no longer runs (terminated, or its start failed after the row was written
   * and the API died) is recorded as failed, so it neither shows progress forever nor blocks the next run.
   */
  async function settleStopped(botId: string): Promise<void> {
    const res = await db.query<{ id: string }>(
      `SELECT id FROM check_runs WHERE bot_id = $1 AND status = 'running' AND started_at < now() - ${START_MARGIN}`,
      [botId],
    );
    const run = res.rows[0];
    if (run && !(await workflowRunning(botId, run.id))) await failRun(db, run.id, STOPPED);
  }

  /** Writes the run and a copy of every question (later edits do not rewrite it); false when there is none. */
  async function insertRun(botId: string, runId: string): Promise<boolean> {
    const res = await db.query(
      `WITH q AS (
         SELECT id, question, expected_source_id, row_number() OVER (ORDER BY created_at, id) AS ordinal
           FROM check_questions WHERE bot_id = $2),
       run AS (
         INSERT INTO check_runs (id, bot_id, status, total)
         SELECT $1, $2, 'running', count(*) FROM q HAVING count(*) > 0
         RETURNING id)
       INSERT INTO check_results (run_id, question_id, ordinal, question, expected_source_id)
       SELECT run.id, q.id, q.ordinal, q.question, q.expected_source_id FROM run CROSS JOIN q`,
      [runId, botId],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async function loadRun(botId: string, runId: string): Promise<CheckRun> {
    const run = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM check_runs WHERE bot_id = $1 AND id = $2`, [
      botId,
      runId,
    ]);
    if (!run.rows[0]) throw errors.notFound('No check run with this id');
    return runView(run.rows[0]);
  }

  /** One run with every question's result (`pending` until checked), in the order of the questions. */
  async function getRun(botId: string, runId: string): Promise<CheckRun & { results: CheckResult[] }> {
    await settleStopped(botId);
    const run = await loadRun(botId, runId);
    const results = await db.query<CheckResult>(
      `SELECT r.question_id, r.question, r.expected_source_id, s.title AS expected_source_title,
              COALESCE(r.outcome, 'pending') AS outcome, r.rank, r.passages
         FROM check_results r
         LEFT JOIN knowledge_sources s ON s.bot_id = $1 AND s.source_id = r.expected_source_id
        WHERE r.run_id = $2 ORDER BY r.ordinal`,
      [botId, runId],
    );
    return { ...run, results: results.rows };
  }

  return {
    /** The agent's test questions, oldest first, each with its expected source's title now (null: gone). */
    async listQuestions(botId: string): Promise<{
      questions: CheckQuestion[];
      limits: { questions: number; question_chars: number; note_chars: number };
    }> {
      const res = await db.query<CheckQuestion>(
        `SELECT ${QUESTION_COLUMNS} FROM check_questions q
           LEFT JOIN knowledge_sources s ON s.bot_id = q.bot_id AND s.source_id = q.expected_source_id
          WHERE q.bot_id = $1 ORDER BY q.created_at, q.id`,
        [botId],
      );
      const { questions, questionChars, noteChars } = LIMITS.checks;
      return {
        questions: res.rows,
        limits: { questions, question_chars: questionChars, note_chars: noteChars },
      };
    },

    /**
     * Adds a test question: its source must exist (400), its wording be new to the agent (409), and the agent keep
     * fewer than `LIMITS.checks.questions` (400 naming the limit).
     */
    async createQuestion(
      botId: string,
      input: { question: string; expected_source_id: string; note?: string },
    ): Promise<CheckQuestion> {
      await requireSource(botId, input.expected_source_id);
      const id = newId('chq');
      try {
        const res = await db.query(
          `INSERT INTO check_questions (id, bot_id, question, expected_source_id, note)
           SELECT $1, $2, $3, $4, $5
            WHERE (SELECT count(*) FROM check_questions WHERE bot_id = $2) < $6`,
          [id, botId, input.question, input.expected_source_id, input.note || null, LIMITS.checks.questions],
        );
        if (!res.rowCount) {
          throw new ApiError(
            'bad_request',
            `An agent keeps at most ${LIMITS.checks.questions} test questions; delete one first`,
          );
        }
      } catch (err) {
        if (isUniqueViolation(err, 'check_questions_wording_key')) throw sameWording(input.question);
        throw err;
      }
      return question(botId, id);
    },

    /** Changes a question's wording, expected source (which must exist) or note; past runs keep what they checked. */
    async updateQuestion(
      botId: string,
      id: string,
      patch: { question?: string; expected_source_id?: string; note?: string | null },
    ): Promise<CheckQuestion> {
      const current = await question(botId, id);
      if (patch.expected_source_id !== undefined && patch.expected_source_id !== current.expected_source_id) {
        await requireSource(botId, patch.expected_source_id);
      }
      try {
        await db.query(
          `UPDATE check_questions
              SET question = COALESCE($3, question),
                  expected_source_id = COALESCE($4, expected_source_id),
                  note = CASE WHEN $5 THEN NULLIF($6, '') ELSE note END,
                  updated_at = now()
            WHERE bot_id = $1 AND id = $2`,
          [
            botId,
            id,
            patch.question ?? null,
            patch.expected_source_id ?? null,
            patch.note !== undefined,
            patch.note ?? null,
          ],
        );
      } catch (err) {
        if (isUniqueViolation(err, 'check_questions_wording_key')) throw sameWording(patch.question ?? '');
        throw err;
      }
      return question(botId, id);
    },

    async deleteQuestion(botId: string, id: string): Promise<{ status: 'deleted'; id: string }> {
      const res = await db.query(`DELETE FROM check_questions WHERE bot_id = $1 AND id = $2`, [botId, id]);
      if (!res.rowCount) throw errors.notFound('No test question with this id');
      return { status: 'deleted', id };
    },

    /**
     * "Run the check": copies the questions into a new run and starts its workflow. 409 `conflict` while a run of the
     * agent is under way (the `check_runs` row is the lock: a partial unique index over running rows); 400 when the
     * agent has no test question. If the workflow cannot be started the run is deleted again: nothing half-written.
     * Runs beyond the newest `LIMITS.checks.runsKept` are deleted.
     */
    async startRun(bot: { botId: string; workspaceId: string }): Promise<CheckRun> {
      const runId = newId('chk');
      for (let attempt = 0; ; attempt++) {
        try {
          if (!(await insertRun(bot.botId, runId))) {
            throw errors.badRequest('Add a test question first: the check runs the agent’s test questions');
          }
          break;
        } catch (err) {
          if (!isUniqueViolation(err, 'check_runs_one_running')) throw err;
          // A run left `running` by a stopped workflow must not block the agent's checks for ever.
          if (attempt === 0) {
            await settleStopped(bot.botId);
            continue;
          }
          throw errors.conflict('A check of this agent is already running; its results show when it has finished');
        }
      }
      const input: KnowledgeCheckInput = { botId: bot.botId, workspaceId: bot.workspaceId, runId };
      try {
        await temporal.client.workflow.start(knowledgeCheckWorkflow, {
          workflowId: knowledgeCheckWorkflowId(bot.botId, runId),
          taskQueue: temporal.taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'FAIL',
          searchAttributes: knowledgeCheckSearchAttributes(input),
        });
      } catch (err) {
        await db.query(`DELETE FROM check_runs WHERE id = $1`, [runId]);
        throw err;
      }
      await db.query(
        `DELETE FROM check_runs WHERE bot_id = $1 AND status <> 'running' AND id NOT IN (
           SELECT id FROM check_runs WHERE bot_id = $1 ORDER BY started_at DESC, id LIMIT $2)`,
        [bot.botId, LIMITS.checks.runsKept],
      );
      return loadRun(bot.botId, runId);
    },

    /** The agent's runs, newest first, with their progress or score; whether one runs now. */
    async listRuns(botId: string, limit: number): Promise<{ running: boolean; runs: CheckRun[] }> {
      await settleStopped(botId);
      const res = await db.query<RunRow>(
        `SELECT ${RUN_COLUMNS} FROM check_runs WHERE bot_id = $1 ORDER BY started_at DESC, id LIMIT $2`,
        [botId, limit],
      );
      const runs = res.rows.map(runView);
      return { running: runs.some((r) => r.status === 'running'), runs };
    },

    getRun,
  };
}

export type CheckService = ReturnType<typeof createCheckService>;
