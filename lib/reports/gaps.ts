import type { Queryable } from '../db';

/**
 * What is missing (docs/decisions/063-what-is-missing.md): the questions an agent could not answer from its knowledge
 * (its chat turns that ended in "I can't answer that"), grouped by similarity so the owner writes one answer for the
 * twenty ways visitors asked the same thing.
 */

export interface UnansweredQuestion {
  run_id: string;
  text: string;
  /** Unix ms */
  at: number;
  session_id: string | null;
}

export interface QuestionGroup {
  /** The group's question as visitors most often asked it (the latest wording among equals). */
  question: string;
  count: number;
  /** Up to five different wordings, newest first. */
  examples: UnansweredQuestion[];
  /** Unix ms */
  last_asked_at: number;
  /** Every question of the group: what "add an answer" marks as answered. */
  run_ids: string[];
}

/** The questions read at most: a few hundred are plenty for the owner's list, and keep the grouping quick. */
const MAX_QUESTIONS = 500;
const MAX_EXAMPLES = 5;
/** Two questions whose content words overlap this much (Jaccard) ask the same thing. */
const SAME_QUESTION = 0.5;

/** Words that carry no topic: a question's content is the rest. */
const STOP_WORDS = new Set(
  (
    'a an the and or but if of to in on at by for with about from into over after before is are was were be been ' +
    'being am do does did have has had can could will would shall should may might must i me my we our you your he ' +
    'she it its they them their this that these those what which who whom whose when where why how there here not ' +
    'no yes please thanks thank hi hello hey any some much many more most very just also so than then too get got'
  ).split(' '),
);

/** A question's content words, lower case, plural and -ing/-ed endings cut, so "shipping" meets "ship". */
export function contentWords(text: string): Set<string> {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\[\[[^\]]*\]\]/g, ' ') // markup in double brackets is not words
    .match(/[\p{L}\p{N}]+/gu);
  const out = new Set<string>();
  for (const w of words ?? []) {
    if (w.length < 2 || STOP_WORDS.has(w)) continue;
    out.add(stem(w));
  }
  return out;
}

function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3).replace(/(.)\1$/, '$1');
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2).replace(/(.)\1$/, '$1');
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('es') && /(s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/**
 * Groups questions (newest first) by similarity: a question joins the first group one of whose questions it shares
 * at least half its content words with; questions with no content words group only with the same words.
 */
export function groupQuestions(questions: UnansweredQuestion[]): QuestionGroup[] {
  const groups: { members: UnansweredQuestion[]; words: Set<string>[] }[] = [];
  for (const q of questions) {
    const words = contentWords(q.text);
    const key = q.text.trim().toLowerCase();
    const home = groups.find((g) =>
      words.size
        ? g.words.some((w) => jaccard(w, words) >= SAME_QUESTION)
        : g.members.some((m) => m.text.trim().toLowerCase() === key),
    );
    if (home) {
      home.members.push(q);
      home.words.push(words);
    } else groups.push({ members: [q], words: [words] });
  }
  return groups
    .map(({ members }) => {
      const wordings = new Map<string, { text: string; n: number }>();
      for (const m of members) {
        const k = m.text.trim().toLowerCase().replace(/\s+/g, ' ');
        const seen = wordings.get(k);
        if (seen) seen.n++;
        else wordings.set(k, { text: m.text.trim(), n: 1 });
      }
      const question = [...wordings.values()].sort((a, b) => b.n - a.n)[0].text;
      const examples: UnansweredQuestion[] = [];
      for (const m of members) {
        if (examples.length >= MAX_EXAMPLES) break;
        if (!examples.some((e) => e.text.trim().toLowerCase() === m.text.trim().toLowerCase())) examples.push(m);
      }
      return {
        question,
        count: members.length,
        examples,
        last_asked_at: Math.max(...members.map((m) => m.at)),
        run_ids: members.map((m) => m.run_id),
      };
    })
    .sort((a, b) => b.count - a.count || b.last_asked_at - a.last_asked_at);
}

/** The bot's unanswered questions of the last `days` that no answer was written for yet, grouped. */
export async function listGaps(db: Queryable, botId: string, days: number): Promise<QuestionGroup[]> {
  const res = await db.query<{ id: string; input: string; at: string; session_id: string | null }>(
    `SELECT id, input, (extract(epoch FROM started_at) * 1000)::bigint AS at, session_id FROM runs
      WHERE bot_id = $1 AND unanswered IS NOT NULL AND gap_source_id IS NULL
        AND started_at >= now() - make_interval(days => $2)
      ORDER BY started_at DESC LIMIT ${MAX_QUESTIONS}`,
    [botId, days],
  );
  return groupQuestions(
    res.rows.map((r) => ({ run_id: r.id, text: r.input, at: Number(r.at), session_id: r.session_id })),
  );
}

/** Marks questions as answered by a knowledge source; returns how many of them were the bot's open questions. */
export async function markAnswered(db: Queryable, botId: string, runIds: string[], sourceId: string): Promise<number> {
  const res = await db.query(
    `UPDATE runs SET gap_source_id = $3
      WHERE bot_id = $1 AND id = ANY($2::text[]) AND unanswered IS NOT NULL AND gap_source_id IS NULL`,
    [botId, runIds, sourceId],
  );
  return res.rowCount ?? 0;
}
