/**
 * The owner's check apart from the page (docs/decisions/155-owner-check.md): what each question's latest result says,
 * a run's score and progress in words, and the trend's points. No DOM here: test/unit/check-model.test.ts drives it.
 */

/**
 * What the rules read of a question, a run and a result: the API's shapes (api/checks.ts), written here so this file
 * imports nothing and loads anywhere (a unit test).
 */
interface Question {
  id: string;
  question: string;
  expected_source_id: string;
  updated_at: number;
}
interface Run {
  id: string;
  status: 'running' | 'done' | 'failed';
  total: number;
  checked: number;
  found: number;
  score: number | null;
  started_at: number;
}
interface Result {
  question_id: string;
  question: string;
  expected_source_id: string;
  outcome: 'pending' | 'found' | 'not_found' | 'source_missing';
  rank: number | null;
}

/** A question's latest result as the page shows it. */
export type QuestionStatus<R extends Result = Result> =
  | { kind: 'found'; rank: number; result: R; changed: boolean }
  | { kind: 'not_found' | 'source_missing'; result: R; changed: boolean }
  | { kind: 'unchecked' };

/** The latest finished run: the one whose results the questions show (a run under way has not got them all yet). */
export function lastDone<T extends Run>(runs: T[]): T | undefined {
  return runs.find((r) => r.status === 'done');
}

/**
 * What the last finished check said of a question: found at a rank, not found, its source gone, or not checked (added
 * since). `changed`: the question was edited after that check, which checked its earlier wording or source.
 */
export function statusOf<R extends Result>(
  question: Question,
  run: { started_at: number; results: R[] } | undefined,
): QuestionStatus<R> {
  const result = run?.results.find((r) => r.question_id === question.id);
  if (!run || !result || result.outcome === 'pending') return { kind: 'unchecked' };
  const changed =
    question.updated_at > run.started_at &&
    (question.question !== result.question || question.expected_source_id !== result.expected_source_id);
  if (result.outcome === 'found') return { kind: 'found', rank: result.rank ?? 1, result, changed };
  return { kind: result.outcome, result, changed };
}

/** "found at rank 2", "not among the first five passages", … */
export function statusWords(status: QuestionStatus<Result>): string {
  switch (status.kind) {
    case 'found':
      return status.rank === 1 ? 'Found first' : `Found at rank ${status.rank}`;
    case 'not_found':
      return 'Not found';
    case 'source_missing':
      return 'Source no longer exists';
    default:
      return 'Not checked yet';
  }
}

export const percentOf = (score: number) => `${Math.round(score * 100)}%`;

/** "3 of 4 found" (with the share when asked). */
export function scoreWords(run: Pick<Run, 'found' | 'total'>, withPercent = false): string {
  const words = `${run.found} of ${run.total} found`;
  return withPercent ? `${words} (${percentOf(run.found / run.total)})` : words;
}

/** "Checked 10 of 12 questions". */
export function progressWords(run: Pick<Run, 'checked' | 'total'>): string {
  return `Checked ${run.checked} of ${run.total} question${run.total === 1 ? '' : 's'}`;
}

/** The finished runs oldest first: the trend's points (failed runs have no score). */
export function trendOf<T extends Run>(runs: T[]): (T & { score: number })[] {
  return runs.filter((r): r is T & { score: number } => r.status === 'done' && r.score !== null).reverse();
}

/** How the score moved from the run before the last to the last: "up 25 points", "down 10 points", "unchanged". */
export function changeWords(trend: { score: number }[]): string | undefined {
  if (trend.length < 2) return undefined;
  const points = Math.round(trend[trend.length - 1].score * 100) - Math.round(trend[trend.length - 2].score * 100);
  if (points === 0) return 'unchanged since the check before';
  return `${points > 0 ? 'up' : 'down'} ${Math.abs(points)} point${Math.abs(points) === 1 ? '' : 's'} since the check before`;
}

/** A question as the add form starts it from a question visitors asked: one line, without `[[…]]` markup, cut to fit. */
export function questionFrom(text: string, maxChars: number): string {
  const plain = text
    .replace(/\[\[[^\]]*\]\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > maxChars ? plain.slice(0, maxChars).trimEnd() : plain;
}
