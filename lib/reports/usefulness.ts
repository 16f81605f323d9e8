import type { Queryable } from '../db';

/**
 * How useful each knowledge source is (docs/decisions/063-what-is-missing.md): over a period, how many answers named
 * it among their sources, and how visitors rated those answers. A source never used may be dead weight or
 * unreachable by the words visitors use; one often rated down is worth a rewrite.
 */
export interface SourceUsefulness {
  source_id: string;
  title: string;
  url: string | null;
  origin: string;
  /** Answers that named it among their sources. */
  used: number;
  /** Of those, rated helpful / not helpful by the visitor. */
  rated_up: number;
  rated_down: number;
  /** Unix ms of the latest answer that used it; null when none did in the period. */
  last_used_at: number | null;
}

export async function sourceUsefulness(db: Queryable, botId: string, days: number): Promise<SourceUsefulness[]> {
  const res = await db.query<Omit<SourceUsefulness, 'last_used_at'> & { last_ms: string | null }>(
    `WITH used AS (
       SELECT m.id, m.session_id, m.at, s->>'source_id' AS source_id
         FROM conversations c
         JOIN messages m ON m.session_id = c.session_id
         CROSS JOIN LATERAL jsonb_array_elements(m.sources) s
        WHERE c.bot_id = $1 AND c.last_message_at >= now() - make_interval(days => $2)
          AND m.author = 'bot' AND m.sources IS NOT NULL
          AND m.at >= (extract(epoch FROM now() - make_interval(days => $2)) * 1000)::bigint),
     rated AS (
       SELECT u.source_id, u.at,
              (SELECT e.event->>'rating' FROM messages e
                WHERE e.session_id = u.session_id AND e.author = 'event' AND e.event->>'kind' = 'rating'
                  AND e.event->>'ref' = u.id
                ORDER BY e.seq DESC LIMIT 1) AS rating
         FROM used u)
     SELECT k.source_id, k.title, k.url, k.origin,
            count(r.source_id)::int AS used,
            count(*) FILTER (WHERE r.rating = 'up')::int AS rated_up,
            count(*) FILTER (WHERE r.rating = 'down')::int AS rated_down,
            max(r.at) AS last_ms
       FROM knowledge_sources k LEFT JOIN rated r ON r.source_id = k.source_id
      WHERE k.bot_id = $1
      GROUP BY k.source_id, k.title, k.url, k.origin, k.seq
      ORDER BY used DESC, rated_down DESC, k.seq`,
    [botId, days],
  );
  return res.rows.map(({ last_ms, ...r }) => ({ ...r, last_used_at: last_ms === null ? null : Number(last_ms) }));
}
