import { WorkflowNotFoundError } from '@temporalio/client';
import {
  type KnowledgeCheckInput,
  knowledgeCheckSearchAttributes,
  knowledgeCheckWorkflowId,
} from '../../workflows/contracts/knowledge-check';
import { knowledgeCheckWorkflow } from '../../workflows/knowledge-check';
import type { Db } from '../db';
import { errors } from '../errors';
import { newId } from '../ids';
import { LIMITS } from '../limits';
import type { Temporal } from '../temporal';
import { type CheckDeps, MS, isUniqueViolation } from './deps';
import { type CheckOutcome, type CheckPassage, failRun } from './store';

/**
 * Runs of the owner's check: starting one (its workflow `knowledge-check/{bot}/{run}`), the runs with their score, and
 * one run's results. A run whose workflow stopped without its last word is recorded as failed when next looked at.
 */

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

const RUN_COLUMNS = `id, bot_id, status, total, checked, found, missing, error, ${MS('started_at')}, ${MS('finished_at')}`;

type RunRow = Omit<CheckRun, 'score' | 'workflow_id'> & { bot_id: string };

function runView({ bot_id, ...row }: RunRow): CheckRun {
  return {
    ...row,
    score: row.status === 'done' ? row.found / row.total : null,
    workflow_id: knowledgeCheckWorkflowId(bot_id, row.id),
  };
}

/** Whether the run's workflow is running now (a row left `running` by one that is not was stopped). */
async function workflowRunning(temporal: Temporal, botId: string, runId: string): Promise<boolean> {
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
async function settleStopped({ db, temporal }: CheckDeps, botId: string): Promise<void> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM check_runs WHERE bot_id = $1 AND status = 'running' AND started_at < now() - ${START_MARGIN}`,
    [botId],
  );
  const run = res.rows[0];
  if (run && !(await workflowRunning(temporal, botId, run.id))) await failRun(db, run.id, STOPPED);
}

/** Writes the run and a copy of every question (later edits do not rewrite it); false when there is none. */
async function insertRun(db: Db, botId: string, runId: string): Promise<boolean> {
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

async function loadRun(db: Db, botId: string, runId: string): Promise<CheckRun> {
  const run = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM check_runs WHERE bot_id = $1 AND id = $2`, [
    botId,
    runId,
  ]);
  if (!run.rows[0]) throw errors.notFound('No check run with this id');
  return runView(run.rows[0]);
}

/**
 * "Run the check": copies the questions into a new run and starts its workflow. 409 `conflict` while a run of the
 * agent is under way (the `check_runs` row is the lock: a partial unique index over running rows); 400 when the
 * agent has no test question. If the workflow cannot be started the run is deleted again: nothing half-written.
 * Runs beyond the newest `LIMITS.checks.runsKept` are deleted.
 */
export async function startRun(deps: CheckDeps, bot: { botId: string; workspaceId: string }): Promise<CheckRun> {
  const { db, temporal } = deps;
  const runId = newId('chk');
  for (let attempt = 0; ; attempt++) {
    try {
      if (!(await insertRun(db, bot.botId, runId))) {
        throw errors.badRequest('Add a test question first: the check runs the agent’s test questions');
      }
      break;
    } catch (err) {
      if (!isUniqueViolation(err, 'check_runs_one_running')) throw err;
      // A run left `running` by a stopped workflow must not block the agent's checks for ever.
      if (attempt === 0) {
        await settleStopped(deps, bot.botId);
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
  return loadRun(db, bot.botId, runId);
}

/** The agent's runs, newest first, with their progress or score; whether one runs now. */
export async function listRuns(
  deps: CheckDeps,
  botId: string,
  limit: number,
): Promise<{ running: boolean; runs: CheckRun[] }> {
  await settleStopped(deps, botId);
  const res = await deps.db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM check_runs WHERE bot_id = $1 ORDER BY started_at DESC, id LIMIT $2`,
    [botId, limit],
  );
  const runs = res.rows.map(runView);
  return { running: runs.some((r) => r.status === 'running'), runs };
}

/** One run with every question's result (`pending` until checked), in the order of the questions. */
export async function getRun(
  deps: CheckDeps,
  botId: string,
  runId: string,
): Promise<CheckRun & { results: CheckResult[] }> {
  await settleStopped(deps, botId);
  const run = await loadRun(deps.db, botId, runId);
  const results = await deps.db.query<CheckResult>(
    `SELECT r.question_id, r.question, r.expected_source_id, s.title AS expected_source_title,
            COALESCE(r.outcome, 'pending') AS outcome, r.rank, r.passages
       FROM check_results r
       LEFT JOIN knowledge_sources s ON s.bot_id = $1 AND s.source_id = r.expected_source_id
      WHERE r.run_id = $2 ORDER BY r.ordinal`,
    [botId, runId],
  );
  return { ...run, results: results.rows };
}
