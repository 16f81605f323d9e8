import type { Queryable } from '../db';
import { errors } from '../errors';

/**
 * What the AI resolved (docs/decisions/064-resolution-report.md): the conversations that started in a period, each
 * in exactly one of these, by what happened in it:
 * - `resolved_by_agent`: the agent answered, never said it could not, no answer was rated down, no person needed;
 * - `not_resolved_by_agent`: no person involved, but the agent said it could not answer or an answer was rated down;
 * - `handed_over`: a person was involved (asked for, the agent could not answer, or a person took over), of which
 *   `resolved_by_person` were closed by a person;
 * - `no_answer`: the agent never answered and no person was involved (a failure, a used-up quota, a visitor gone).
 * An honest figure: an answer that offered a person counts against the agent even when the visitor left.
 */
export interface ResolutionCounts {
  conversations: number;
  resolved_by_agent: number;
  not_resolved_by_agent: number;
  handed_over: number;
  resolved_by_person: number;
  no_answer: number;
}

export interface ResolutionReport {
  from: string;
  to: string;
  time_zone: string;
  totals: ResolutionCounts;
  /** One row per day of the period (in its time zone), days without conversations included. */
  days: (ResolutionCounts & { date: string })[];
  ratings: { up: number; down: number };
  satisfaction: {
    answers: number;
    /** Mean score 1–5, one decimal; null without answers. */
    average: number | null;
    /** How many answered 1, 2, 3, 4 and 5. */
    scores: [number, number, number, number, number];
    /** The latest comments visitors left, newest first. */
    comments: { session_id: string; score: number; comment: string; at: number }[];
  };
}

export interface ResolutionQuery {
  workspaceId: string;
  botId?: string;
  /** `YYYY-MM-DD`, inclusive, in `timeZone`; default: 29 days before `to`. */
  from?: string;
  /** Default: today in `timeZone`. */
  to?: string;
  timeZone: string;
}

const DAY_MS = 86_400_000;

/** The longest period a report covers, in days. */
const MAX_DAYS = 366;

/** The period asked for, its defaults filled in; 400 for one that ends before it starts or is too long. */
function periodOf(q: Pick<ResolutionQuery, 'from' | 'to' | 'timeZone'>): { from: string; to: string } {
  const to = q.to ?? today(q.timeZone);
  const from = q.from ?? shiftDate(to, -29);
  if (from > to) throw errors.badRequest('`from` must not be after `to`');
  if (shiftDate(from, MAX_DAYS - 1) < to) throw errors.badRequest(`A report covers at most ${MAX_DAYS} days`);
  return { from, to };
}

/** Today's date in a time zone, `YYYY-MM-DD`. */
function today(timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    Date.now(),
  );
}

function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

const LATEST_COMMENTS = 10;

/** The period's conversations with what happened in each ($1 workspace, $2 bot or null, $3 from, $4 to, $5 zone). */
const CONVERSATIONS = `
  SELECT c.session_id, to_char((c.created_at AT TIME ZONE $5)::date, 'YYYY-MM-DD') AS day,
         c.escalated_at IS NOT NULL AS handed_over,
         c.escalated_at IS NOT NULL AND c.resolved_at IS NOT NULL AS resolved,
         EXISTS (SELECT 1 FROM runs r WHERE r.session_id = c.session_id AND r.status = 'done') AS answered,
         EXISTS (SELECT 1 FROM runs r WHERE r.session_id = c.session_id AND r.unanswered IS NOT NULL) AS unanswered,
         EXISTS (SELECT 1 FROM messages e WHERE e.session_id = c.session_id AND e.author = 'event'
                   AND e.event->>'kind' = 'rating' AND e.event->>'rating' = 'down') AS rated_down,
         c.satisfaction_score, c.satisfaction_comment, c.satisfaction_at
    FROM conversations c
   WHERE c.workspace_id = $1 AND ($2::text IS NULL OR c.bot_id = $2)
     AND c.created_at >= ($3::date::timestamp AT TIME ZONE $5)
     AND c.created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)`;

export async function resolutionReport(db: Queryable, q: ResolutionQuery): Promise<ResolutionReport> {
  const { from, to } = periodOf(q);
  const values = [q.workspaceId, q.botId ?? null, from, to, q.timeZone];
  const [days, ratings, satisfaction, comments] = await Promise.all([
    db.query<ResolutionCounts & { date: string }>(
      `WITH conv AS (${CONVERSATIONS})
       SELECT day AS date, count(*)::int AS conversations,
              count(*) FILTER (WHERE NOT handed_over AND answered AND NOT unanswered AND NOT rated_down)::int
                AS resolved_by_agent,
              count(*) FILTER (WHERE NOT handed_over AND answered AND (unanswered OR rated_down))::int
                AS not_resolved_by_agent,
              count(*) FILTER (WHERE handed_over)::int AS handed_over,
              count(*) FILTER (WHERE resolved)::int AS resolved_by_person,
              count(*) FILTER (WHERE NOT handed_over AND NOT answered)::int AS no_answer
         FROM conv GROUP BY day ORDER BY day`,
      values,
    ),
    db.query<{ rating: string; n: number }>(
      `WITH conv AS (${CONVERSATIONS})
       SELECT e.event->>'rating' AS rating, count(*)::int AS n
         FROM conv JOIN messages e ON e.session_id = conv.session_id
        WHERE e.author = 'event' AND e.event->>'kind' = 'rating'
        GROUP BY 1`,
      values,
    ),
    db.query<{ score: number; n: number }>(
      `WITH conv AS (${CONVERSATIONS})
       SELECT satisfaction_score AS score, count(*)::int AS n FROM conv
        WHERE satisfaction_score IS NOT NULL GROUP BY 1`,
      values,
    ),
    db.query<{ session_id: string; score: number; comment: string; at: string }>(
      `WITH conv AS (${CONVERSATIONS})
       SELECT session_id, satisfaction_score AS score, satisfaction_comment AS comment,
              (extract(epoch FROM satisfaction_at) * 1000)::bigint AS at
         FROM conv WHERE satisfaction_comment IS NOT NULL AND satisfaction_comment <> ''
        ORDER BY satisfaction_at DESC LIMIT ${LATEST_COMMENTS}`,
      values,
    ),
  ]);

  const byDate = new Map(days.rows.map((d) => [d.date, d]));
  const series = datesBetween(from, to).map((date) => byDate.get(date) ?? { date, ...zero() });
  const totals = zero();
  for (const d of series) for (const k of Object.keys(totals) as (keyof ResolutionCounts)[]) totals[k] += d[k];

  const scores: [number, number, number, number, number] = [0, 0, 0, 0, 0];
  for (const s of satisfaction.rows) scores[s.score - 1] = s.n;
  const answers = scores.reduce((a, b) => a + b, 0);
  const sum = scores.reduce((a, n, i) => a + n * (i + 1), 0);
  return {
    from,
    to,
    time_zone: q.timeZone,
    totals,
    days: series,
    ratings: {
      up: ratings.rows.find((r) => r.rating === 'up')?.n ?? 0,
      down: ratings.rows.find((r) => r.rating === 'down')?.n ?? 0,
    },
    satisfaction: {
      answers,
      average: answers ? Math.round((sum / answers) * 10) / 10 : null,
      scores,
      comments: comments.rows.map((c) => ({ ...c, at: Number(c.at) })),
    },
  };
}

function zero(): ResolutionCounts {
  return {
    conversations: 0,
    resolved_by_agent: 0,
    not_resolved_by_agent: 0,
    handed_over: 0,
    resolved_by_person: 0,
    no_answer: 0,
  };
}

/** Every calendar date from `from` to `to`, inclusive (`YYYY-MM-DD`; plain date arithmetic, no time zone). */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}
