import type { Queryable } from '../db';
import type { Passage } from '../knowledge/retrieve';
import { LIMITS } from '../limits';

/**
 * The owner's check of an agent (docs/decisions/155-owner-check.md), the side its workflow's activities use: a run's
 * unchecked questions, what each found, and the run's end. The service (./service.ts) owns the rest.
 */

export type CheckOutcome = 'found' | 'not_found' | 'source_missing';

/** A passage as a result keeps it: where it is from, and the start of its text. */
export interface CheckPassage {
  source_id: string;
  title: string;
  url?: string;
  heading_path?: string[];
  page?: number;
  excerpt: string;
}

export interface PendingQuestion {
  question_id: string;
  question: string;
  expected_source_id: string;
}

export interface QuestionResult {
  question_id: string;
  outcome: CheckOutcome;
  /** 1-based, among the first `LIMITS.checks.rankedPassages` passages; null unless found. */
  rank: number | null;
  passages: CheckPassage[];
}

/** The start of a passage's text, cut at a word where one is near. */
function excerptOf(text: string, max: number = LIMITS.checks.passageExcerptChars): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.lastIndexOf(' ', max - 1);
  return `${flat.slice(0, cut > max * 0.6 ? cut : max - 1).trimEnd()}…`;
}

/**
 * What one question found: the rank of its expected source's first passage among the passages a chat turn gets (the
 * first five), or why not — the source is there but was not among them, or the source no longer exists.
 */
export function judgeQuestion(question: PendingQuestion, passages: Passage[], sourceExists: boolean): QuestionResult {
  const top = passages.slice(0, LIMITS.checks.rankedPassages);
  const at = top.findIndex((p) => p.sourceId === question.expected_source_id);
  return {
    question_id: question.question_id,
    outcome: at >= 0 ? 'found' : sourceExists ? 'not_found' : 'source_missing',
    rank: at >= 0 ? at + 1 : null,
    passages: top.map((p) => ({
      source_id: p.sourceId,
      title: p.title,
      ...(p.url ? { url: p.url } : {}),
      ...(p.headingPath?.length ? { heading_path: p.headingPath } : {}),
      ...(p.page != null ? { page: p.page } : {}),
      excerpt: excerptOf(p.text),
    })),
  };
}

/** The run's next unchecked questions in order; none when the run is over (or gone with its agent). */
export async function pendingQuestions(db: Queryable, runId: string, limit: number): Promise<PendingQuestion[]> {
  const res = await db.query<PendingQuestion>(
    `SELECT r.question_id, r.question, r.expected_source_id
       FROM check_results r JOIN check_runs c ON c.id = r.run_id AND c.status = 'running'
      WHERE r.run_id = $1 AND r.outcome IS NULL
      ORDER BY r.ordinal LIMIT $2`,
    [runId, limit],
  );
  return res.rows;
}

/** Which of these sources the agent has now. */
export async function existingSources(db: Queryable, botId: string, sourceIds: string[]): Promise<Set<string>> {
  const res = await db.query<{ source_id: string }>(
    `SELECT source_id FROM knowledge_sources WHERE bot_id = $1 AND source_id = ANY($2::text[])`,
    [botId, sourceIds],
  );
  return new Set(res.rows.map((r) => r.source_id));
}

/**
 * Records a batch's results and the run's counters in one statement (a retried batch writes only what is still
 * unchecked, and counts nothing twice); returns how many questions remain unchecked.
 */
export async function recordResults(db: Queryable, runId: string, results: QuestionResult[]): Promise<number> {
  const res = await db.query<{ remaining: number }>(
    `WITH done AS (
       UPDATE check_results r
          SET outcome = v.outcome, rank = v.rank, passages = v.passages, checked_at = now()
         FROM jsonb_to_recordset($2::jsonb) AS v(question_id text, outcome text, rank integer, passages jsonb)
        WHERE r.run_id = $1 AND r.question_id = v.question_id AND r.outcome IS NULL
        RETURNING r.outcome),
     before AS (
       SELECT count(*) FILTER (WHERE outcome IS NOT NULL) AS checked,
              count(*) FILTER (WHERE outcome = 'found') AS found,
              count(*) FILTER (WHERE outcome = 'source_missing') AS missing
         FROM check_results WHERE run_id = $1)
     UPDATE check_runs c
        SET checked = before.checked + (SELECT count(*) FROM done),
            found = before.found + (SELECT count(*) FROM done WHERE outcome = 'found'),
            missing = before.missing + (SELECT count(*) FROM done WHERE outcome = 'source_missing')
       FROM before
      WHERE c.id = $1
      RETURNING c.total - c.checked AS remaining`,
    [runId, JSON.stringify(results)],
  );
  return res.rows[0]?.remaining ?? 0;
}

/** The run's last word when every question was checked; null when it had ended otherwise (or is gone). */
export async function finishRun(db: Queryable, runId: string): Promise<{ total: number; found: number } | null> {
  const res = await db.query<{ total: number; found: number }>(
    `UPDATE check_runs SET status = 'done', finished_at = now()
      WHERE id = $1 AND status = 'running' RETURNING total, found`,
    [runId],
  );
  return res.rows[0] ?? null;
}

/** The run ended without checking every question (its attempts gave up, or its workflow stopped). */
export async function failRun(db: Queryable, runId: string, error: string): Promise<void> {
  await db.query(
    `UPDATE check_runs SET status = 'failed', error = $2, finished_at = now() WHERE id = $1 AND status = 'running'`,
    [runId, error],
  );
}
