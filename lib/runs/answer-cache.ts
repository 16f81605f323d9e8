import { createHash } from 'node:crypto';
import { type Queryable, preparedStatement } from '../db';
import type { AnswerSource } from '../../workflows/contracts/agent-run';

/**
 * The bot's answer cache (contract: a knowledge write "resets the bot's answer cache"; docs/decisions/057-answer-cache.md).
 * A question already answered with the same knowledge, settings and model, on the same page and after the
 * same conversation, is answered again without a model call. Everything an answer depends on is in its key, so
 * nothing is ever purged for correctness: a knowledge write bumps the version, a settings change changes the
 * instructions or model, and an entry older than its TTL is not read.
 */

/** What goes into a cache key. */
export interface CacheKeyParts {
  knowledgeVersion: number;
  model: string;
  instructions: string;
  question: string;
  pageContext?: string;
  /** The conversation before this question, oldest first. */
  history: { author: string; text: string }[];
}

/** The question as it is compared: Unicode-normalized, lower case, spaces collapsed, closing punctuation dropped. */
function normalizeQuestion(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s?!.…。？！]+$/u, '');
}

export function cacheKey(p: CacheKeyParts): Buffer {
  return createHash('sha256')
    .update(
      JSON.stringify([
        1,
        p.knowledgeVersion,
        p.model,
        p.instructions,
        normalizeQuestion(p.question),
        p.pageContext ?? '',
        p.history.map((m) => [m.author, m.text]),
      ]),
    )
    .digest();
}

/**
 * What a turn knows of its cache key before its first statement: the question and the page. The first statement
 * asks whether any fresh entry answers this question (lib/runs/bookkeeping.ts, START_RUN); only then is the full key
 * looked up. Most questions are new, and their turn is spared a round trip.
 */
export function questionKey(question: string, pageContext?: string): Buffer {
  return createHash('sha256')
    .update(JSON.stringify([1, normalizeQuestion(question), pageContext ?? '']))
    .digest();
}

const LOOKUP = preparedStatement(
  'answer-cache-lookup',
  `SELECT answer, model, sources FROM answer_cache WHERE bot_id = $1 AND key = $2 AND expires_at > now()`,
);

/** The cached answer for this key, if one is fresh. */
export async function cachedAnswer(
  db: Queryable,
  botId: string,
  key: Buffer,
): Promise<{ answer: string; model: string; sources: AnswerSource[] | null } | null> {
  const res = await db.query<{ answer: string; model: string; sources: AnswerSource[] | null }>(LOOKUP([botId, key]));
  return res.rows[0] ?? null;
}
