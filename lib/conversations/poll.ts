import { type Queryable, preparedStatement } from '../db';
import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import { LIMITS } from '../limits';
import type { AnswerSource } from '../../workflows/contracts/agent-run';
import { type AttachmentRef, mediaUrl } from '../media/service';

/** An attachment as clients see it: what the message holds, and its address. */
export type AttachmentView = AttachmentRef & { url: string };

export function attachmentView(ref: AttachmentRef, mediaBaseUrl: string): AttachmentView {
  return { ...ref, url: mediaUrl(mediaBaseUrl, ref.id) };
}

const PAGE = LIMITS.pollPageMessages;

export interface PolledMessage {
  id: string;
  author: string;
  text: string;
  at: number;
  attachment?: AttachmentView;
  /** The widget's only (`forWidget`): who of the team wrote an operator's reply (their first name). */
  author_name?: string;
  /** The widget's only: the knowledge sources a bot answer used (its links under the answer after a reload). */
  sources?: AnswerSource[];
}

export interface PollResult {
  messages: PolledMessage[];
  status: string;
  operator_typing: boolean;
  operator_here?: boolean;
  next_cursor: string;
  /**
   * The widget's only (`forWidget`): a person resolved the conversation (Unix ms) and the visitor has neither
   * said how it went nor written since, so the widget asks.
   */
  satisfaction_asked?: { resolved_at: number };
  /**
   * The widget's only: the conversation waits for a team that is away (handed over outside business hours), and is
   * back then (Unix ms; null: no opening ahead) — what the widget says after a reload.
   */
  after_hours?: { back_at: number | null };
}

/**
 * The poll's statement: the public API's (the contract's fields only, the hottest path) and the widget's, which also reads
 * who of the team wrote an operator's reply and whether to ask how the help went. Two statements rather than one
 * with everything: the public poll would pay for columns it drops (an `author_name` in every message's JSON).
 */
function pollStatement(name: string, widget: boolean) {
  return preparedStatement(
    name,
    `SELECT c.status,
            COALESCE(c.operator_typing_until > now(), false) AS typing,
            (c.status = 'waiting' AND c.operator_seen_at IS NOT NULL) AS here,
            ${
              widget
                ? `CASE WHEN c.resolved_at IS NOT NULL AND c.status = 'bot'
                      AND (c.satisfaction_at IS NULL OR c.satisfaction_at < c.resolved_at)
                      AND NOT EXISTS (SELECT 1 FROM messages v
                                       WHERE v.session_id = c.session_id AND v.author = 'visitor'
                                         AND v.at > extract(epoch FROM c.resolved_at) * 1000)
                 THEN (extract(epoch FROM c.resolved_at) * 1000)::bigint END`
                : 'NULL::bigint'
            } AS satisfaction_due,
            ${
              widget
                ? `(c.status = 'waiting' AND c.after_hours) AS away,
                   (extract(epoch FROM c.team_back_at) * 1000)::bigint AS back_ms`
                : 'false AS away, NULL::bigint AS back_ms'
            },
            COALESCE((SELECT json_agg(m ORDER BY m.seq)
                        FROM (SELECT id, author, text, at, seq, attachment${widget ? ', author_name, sources' : ''} FROM messages
                               WHERE session_id = c.session_id AND seq > $3 AND author <> 'event'
                               ORDER BY seq LIMIT ${PAGE}) m), '[]'::json) AS messages
       FROM conversations c
      WHERE c.session_id = $1 AND c.bot_id = $2`,
  );
}
const POLL = pollStatement('poll-messages', false);
const POLL_WIDGET = pollStatement('poll-messages-widget', true);

/**
 * `GET /v1/api/messages`, the hottest path: one indexed query, no Temporal. Events are never shown to the
 * visitor. A session that does not exist, or belongs to another bot, reads as an empty conversation.
 */
export async function pollMessages(
  { db }: { db: Queryable },
  botId: string,
  sessionId: string,
  cursor: string | undefined,
  mediaBaseUrl: string,
  opts: { forWidget?: boolean } = {},
): Promise<PollResult> {
  const after = cursor ? decodeCursor(cursor, CURSORS.seq).seq : 0;
  const res = await db.query<{
    status: string;
    typing: boolean;
    here: boolean;
    satisfaction_due: number | null;
    away: boolean;
    back_ms: string | null;
    messages: {
      id: string;
      author: string;
      text: string;
      at: number;
      seq: number;
      attachment: AttachmentRef | null;
      author_name?: string | null;
      sources?: AnswerSource[] | null;
    }[];
  }>((opts.forWidget ? POLL_WIDGET : POLL)([sessionId, botId, after]));
  const row = res.rows[0];
  if (!row) return { messages: [], status: 'bot', operator_typing: false, next_cursor: encodeCursor({ seq: after }) };
  const last = row.messages.at(-1)?.seq ?? after;
  return {
    messages: row.messages.map(({ id, author, text, at, attachment, author_name, sources }) => ({
      id,
      author,
      text,
      at: Number(at),
      ...(attachment ? { attachment: attachmentView(attachment, mediaBaseUrl) } : {}),
      ...(author_name ? { author_name } : {}),
      ...(sources ? { sources } : {}),
    })),
    status: row.status,
    operator_typing: row.typing,
    ...(row.here ? { operator_here: true } : {}),
    next_cursor: encodeCursor({ seq: last }),
    ...(row.satisfaction_due !== null ? { satisfaction_asked: { resolved_at: Number(row.satisfaction_due) } } : {}),
    ...(row.away ? { after_hours: { back_at: row.back_ms === null ? null : Number(row.back_ms) } } : {}),
  };
}
