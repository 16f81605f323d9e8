import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { LIMITS } from '../limits';
import { type CheckDeps, MS, isUniqueViolation } from './deps';

/** The owner's check: its test questions, each with the knowledge source that should answer it (CRUD). */

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

const QUESTION_COLUMNS = `q.id, q.question, q.expected_source_id, s.title AS expected_source_title, q.note,
  ${MS('q.created_at')}, ${MS('q.updated_at')}`;

async function question(db: Db, botId: string, id: string): Promise<CheckQuestion> {
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
async function requireSource(db: Db, botId: string, sourceId: string): Promise<void> {
  const res = await db.query(`SELECT 1 FROM knowledge_sources WHERE bot_id = $1 AND source_id = $2`, [botId, sourceId]);
  if (!res.rowCount) {
    throw errors.badRequest(`expected_source_id: this agent has no knowledge source "${sourceId}"`);
  }
}

const sameWording = (wording: string) =>
  errors.conflict(`The check already has the question "${wording}"; edit that one instead`);

/** The agent's test questions, oldest first, each with its expected source's title now (null: gone). */
export async function listQuestions(
  { db }: CheckDeps,
  botId: string,
): Promise<{
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
}

/**
 * Adds a test question: its source must exist (400), its wording be new to the agent (409), and the agent keep
 * fewer than `LIMITS.checks.questions` (400 naming the limit).
 */
export async function createQuestion(
  { db }: CheckDeps,
  botId: string,
  input: { question: string; expected_source_id: string; note?: string },
): Promise<CheckQuestion> {
  await requireSource(db, botId, input.expected_source_id);
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
  return question(db, botId, id);
}

/** Changes a question's wording, expected source (which must exist) or note; past runs keep what they checked. */
export async function updateQuestion(
  { db }: CheckDeps,
  botId: string,
  id: string,
  patch: { question?: string; expected_source_id?: string; note?: string | null },
): Promise<CheckQuestion> {
  const current = await question(db, botId, id);
  if (patch.expected_source_id !== undefined && patch.expected_source_id !== current.expected_source_id) {
    await requireSource(db, botId, patch.expected_source_id);
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
  return question(db, botId, id);
}

export async function deleteQuestion(
  { db }: CheckDeps,
  botId: string,
  id: string,
): Promise<{ status: 'deleted'; id: string }> {
  const res = await db.query(`DELETE FROM check_questions WHERE bot_id = $1 AND id = $2`, [botId, id]);
  if (!res.rowCount) throw errors.notFound('No test question with this id');
  return { status: 'deleted', id };
}
