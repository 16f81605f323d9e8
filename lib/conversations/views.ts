import { CURSORS, decodeCursor, encodeCursor } from '../cursor';
import type { Queryable } from '../db';
import type { z } from 'zod';
import type { AttachmentRef } from '../media/service';
import type { Message } from '../schemas/conversation';
import type { VisitorPanel as VisitorPanelSchema } from '../schemas/operator';
import type { AnswerSource } from '../../workflows/contracts/agent-run';
import type { BriefingSource } from './briefing';
import { attachmentView } from './poll';
import type { ConversationRow } from './sessions';
import type { EscalationReason } from '../../workflows/contracts/conversation';

/**
 * What operators read of conversations (the operator API and the dashboard's inbox): lists of requests and
 * transcripts with their events and images. The conversation service checks whose conversation it is, then reads here.
 */
export interface Page {
  limit: number;
  cursor?: string;
}

export type InboxOptions = {
  status: 'open' | 'all';
  botId?: string;
  /** Only the conversations assigned to this person, or (null) to nobody; absent: all. */
  assignedTo?: string | null;
} & Page;

/** Handed over outside business hours: when the team is back (null: not after hours). */
function afterHoursOf(r: { after_hours: boolean; team_back_ms: string | null }): { back_at: number | null } | null {
  return r.after_hours ? { back_at: r.team_back_ms === null ? null : Number(r.team_back_ms) } : null;
}

/** A conversation's last message as the lists read it: an image is its `attachment`, beside the text as stored. */
type LastMessageRow = { author: string; text: string; at: number; attachment: AttachmentRef | null };

function lastMessageOf(last: LastMessageRow | null, mediaBaseUrl: string) {
  if (!last) return null;
  const { attachment, ...message } = last;
  return {
    ...message,
    at: Number(last.at),
    ...(attachment ? { attachment: attachmentView(attachment, mediaBaseUrl) } : {}),
  };
}

/** Open requests of a bot (handed to a person, `waiting` or `operator`), most recently handed over first. */
export async function listThreads(db: Queryable, botId: string, page: Page, mediaBaseUrl: string) {
  const after = page.cursor ? decodeCursor(page.cursor, CURSORS.threads) : undefined;
  const res = await db.query<{
    session_id: string;
    status: string;
    visitor_user: string | null;
    visitor_typing: boolean;
    escalated_ms: number;
    escalation_reason: EscalationReason | null;
    after_hours: boolean;
    team_back_ms: string | null;
    last_ms: number;
    last: LastMessageRow | null;
  }>(
    `SELECT c.session_id, c.status, c.visitor_user, COALESCE(c.visitor_typing_until > now(), false) AS visitor_typing,
            (extract(epoch FROM c.escalated_at) * 1000)::bigint AS escalated_ms, c.escalation_reason, c.after_hours,
            (extract(epoch FROM c.team_back_at) * 1000)::bigint AS team_back_ms,
            (extract(epoch FROM c.last_message_at) * 1000)::bigint AS last_ms,
            (SELECT json_build_object('author', m.author, 'text', m.text, 'at', m.at, 'attachment', m.attachment) FROM messages m
              WHERE m.session_id = c.session_id AND m.author <> 'event' ORDER BY m.seq DESC LIMIT 1) AS last
       FROM conversations c
      WHERE c.bot_id = $1 AND c.escalated_at IS NOT NULL AND c.status IN ('waiting', 'operator')
        AND ($2::bigint IS NULL OR ((extract(epoch FROM c.escalated_at) * 1000)::bigint, c.session_id) < ($2::bigint, $3::text))
      ORDER BY c.escalated_at DESC, c.session_id DESC
      LIMIT $4`,
    [botId, after?.e ?? null, after?.s ?? null, page.limit + 1],
  );
  const rows = res.rows.slice(0, page.limit);
  const last = rows.at(-1);
  return {
    threads: rows.map((r) => ({
      session_id: r.session_id,
      status: r.status,
      visitor_user: r.visitor_user,
      visitor_typing: r.visitor_typing,
      escalated_at: Number(r.escalated_ms),
      escalation_reason: r.escalation_reason,
      after_hours: afterHoursOf(r),
      last_message_at: Number(r.last_ms),
      last_message: lastMessageOf(r.last, mediaBaseUrl),
    })),
    next_cursor:
      res.rows.length > page.limit && last ? encodeCursor({ e: Number(last.escalated_ms), s: last.session_id }) : '',
  };
}

/**
 * Conversations of a workspace's bots (or one), with the bot's name: `open` requests as `listThreads` orders them, or
 * `all` by latest activity. Keysets: open requests by hand-over time (ms) and session, all by last activity and session.
 */
export async function listInbox(db: Queryable, workspaceId: string, opts: InboxOptions, mediaBaseUrl: string) {
  const open = opts.status === 'open';
  const byHandover = opts.cursor && open ? decodeCursor(opts.cursor, CURSORS.threads) : undefined;
  const byActivity = opts.cursor && !open ? decodeCursor(opts.cursor, CURSORS.runs) : undefined;
  const res = await db.query<{
    bot_id: string;
    bot_name: string;
    session_id: string;
    status: string;
    visitor_user: string | null;
    visitor_name: string | null;
    visitor_typing: boolean;
    escalated_ms: string | null;
    escalation_reason: EscalationReason | null;
    after_hours: boolean;
    team_back_ms: string | null;
    last_ms: string;
    last_text: string;
    last: LastMessageRow | null;
    assignee_id: string | null;
    assignee_name: string | null;
  }>(
    `SELECT c.bot_id, b.name AS bot_name, c.session_id, c.status, c.visitor_user,
            a.id AS assignee_id, COALESCE(NULLIF(btrim(a.name), ''), a.email) AS assignee_name,
            (SELECT COALESCE(NULLIF(m.event->>'name', ''), m.event->>'contact') FROM messages m
              WHERE m.session_id = c.session_id AND m.author = 'event' AND m.event->>'kind' = 'contact'
              ORDER BY m.seq DESC LIMIT 1) AS visitor_name,
            COALESCE(c.visitor_typing_until > now(), false) AS visitor_typing,
            (extract(epoch FROM c.escalated_at) * 1000)::bigint AS escalated_ms, c.escalation_reason, c.after_hours,
            (extract(epoch FROM c.team_back_at) * 1000)::bigint AS team_back_ms,
            (extract(epoch FROM c.last_message_at) * 1000)::bigint AS last_ms,
            c.last_message_at::text AS last_text,
            (SELECT json_build_object('author', m.author, 'text', m.text, 'at', m.at, 'attachment', m.attachment)
               FROM messages m WHERE m.session_id = c.session_id AND m.author <> 'event'
              ORDER BY m.seq DESC LIMIT 1) AS last
       FROM conversations c JOIN bots b ON b.id = c.bot_id LEFT JOIN users a ON a.id = c.assignee_user_id
      WHERE c.workspace_id = $1 AND ($2::text IS NULL OR c.bot_id = $2)
        AND (NOT $8 OR c.assignee_user_id IS NOT DISTINCT FROM $9::text)
        AND (NOT $3 OR (c.escalated_at IS NOT NULL AND c.status IN ('waiting', 'operator')))
        AND ($4::bigint IS NULL OR ((extract(epoch FROM c.escalated_at) * 1000)::bigint, c.session_id) < ($4, $5::text))
        AND ($6::timestamptz IS NULL OR (c.last_message_at, c.session_id) < ($6, $5::text))
      ORDER BY CASE WHEN $3 THEN c.escalated_at END DESC, CASE WHEN NOT $3 THEN c.last_message_at END DESC,
               c.session_id DESC
      LIMIT $7`,
    [
      workspaceId,
      opts.botId ?? null,
      open,
      byHandover?.e ?? null,
      byHandover?.s ?? byActivity?.i ?? null,
      byActivity?.t ?? null,
      opts.limit + 1,
      opts.assignedTo !== undefined,
      opts.assignedTo ?? null,
    ],
  );
  const rows = res.rows.slice(0, opts.limit);
  const last = rows.at(-1);
  return {
    threads: rows.map((r) => ({
      bot_id: r.bot_id,
      bot_name: r.bot_name,
      session_id: r.session_id,
      status: r.status,
      visitor_user: r.visitor_user,
      visitor_name: r.visitor_name,
      visitor_typing: r.visitor_typing,
      escalated_at: r.escalated_ms === null ? null : Number(r.escalated_ms),
      escalation_reason: r.escalation_reason,
      after_hours: afterHoursOf(r),
      last_message_at: Number(r.last_ms),
      last_message: lastMessageOf(r.last, mediaBaseUrl),
      assignee: r.assignee_id ? { id: r.assignee_id, name: r.assignee_name ?? '' } : null,
    })),
    next_cursor:
      res.rows.length > opts.limit && last
        ? open
          ? encodeCursor({ e: Number(last.escalated_ms), s: last.session_id })
          : encodeCursor({ t: last.last_text, i: last.session_id })
        : '',
  };
}

/** A transcript page, messages and events; reading it tells the visitor an operator is reading (`operator_here`). */
export async function readTranscript(
  db: Queryable,
  conversation: ConversationRow,
  page: Page,
  mediaBaseUrl: string,
  opts: { authorNames?: boolean } = {},
) {
  const after = page.cursor ? decodeCursor(page.cursor, CURSORS.seq).seq : 0;
  const [meta, rows] = await Promise.all([
    db.query<{
      visitor_user: string | null;
      status: string;
      visitor_typing: boolean;
      briefing: string | null;
      briefing_source: BriefingSource | null;
      briefing_ms: string | null;
      escalation_reason: EscalationReason | null;
      after_hours: boolean;
      team_back_ms: string | null;
    }>(
      `UPDATE conversations SET operator_seen_at = COALESCE(operator_seen_at, now()) WHERE session_id = $1
       RETURNING visitor_user, status, COALESCE(visitor_typing_until > now(), false) AS visitor_typing,
                 briefing, briefing_source, (extract(epoch FROM briefing_at) * 1000)::bigint AS briefing_ms,
                 escalation_reason, after_hours, (extract(epoch FROM team_back_at) * 1000)::bigint AS team_back_ms`,
      [conversation.session_id],
    ),
    db.query<{
      seq: number;
      id: string;
      author: string;
      text: string;
      at: number;
      event: NonNullable<z.infer<typeof Message>['event']> | null;
      attachment: AttachmentRef | null;
      author_name: string | null;
      sources: AnswerSource[] | null;
    }>(
      `SELECT seq, id, author, text, at, event, attachment, author_name, sources FROM messages WHERE session_id = $1 AND seq > $2
        ORDER BY seq LIMIT $3`,
      [conversation.session_id, after, page.limit + 1],
    ),
  ]);
  const messages = rows.rows.slice(0, page.limit);
  return {
    session_id: conversation.session_id,
    status: meta.rows[0]?.status ?? conversation.status,
    visitor_user: meta.rows[0]?.visitor_user ?? null,
    visitor_typing: meta.rows[0]?.visitor_typing ?? false,
    // Why and when it was last handed over, as the thread lists say.
    escalation_reason: meta.rows[0]?.escalation_reason ?? null,
    after_hours: meta.rows[0] ? afterHoursOf(meta.rows[0]) : null,
    // The operator's briefing, written when the conversation was last handed to the team, and who wrote it (one of
    // unknown origin is said to be the model's: the label that asks for care).
    briefing: meta.rows[0]?.briefing
      ? {
          text: meta.rows[0].briefing,
          at: Number(meta.rows[0].briefing_ms),
          source: meta.rows[0].briefing_source ?? 'model',
        }
      : null,
    messages: messages.map((m) => ({
      id: m.id,
      author: m.author,
      text: m.text,
      at: Number(m.at),
      ...(m.event ? { event: m.event } : {}),
      ...(m.attachment ? { attachment: attachmentView(m.attachment, mediaBaseUrl) } : {}),
      ...(m.sources ? { sources: m.sources } : {}),
      // The dashboard's inbox names who of the team wrote a reply; the operator API's transcript stays the contract's.
      ...(opts.authorNames && m.author_name ? { author_name: m.author_name } : {}),
    })),
    next_cursor: rows.rows.length > page.limit ? encodeCursor({ seq: Number(messages.at(-1)!.seq) }) : '',
    // Where a reader that keeps watching continues (after the last message read), even on the last page.
    resume_cursor: encodeCursor({ seq: messages.length ? Number(messages.at(-1)!.seq) : after }),
  };
}

/** What the inbox's visitor panel shows beside a conversation (`GET …/threads/{sid}/visitor`). */
export type VisitorPanel = z.infer<typeof VisitorPanelSchema>;

const EARLIER_CONVERSATIONS = 10;

/**
 * Who the visitor is, as far as the conversation says, and their other conversations with the same agent, each
 * saying whether the site confirmed that it is the same person.
 */
export async function readVisitorPanel(
  db: Queryable,
  conversation: ConversationRow,
  mediaBaseUrl: string,
): Promise<VisitorPanel> {
  const res = await db.query<{
    user: string | null;
    user_confirmed: boolean;
    contact: { name?: string; contact?: string; note?: string } | null;
    first_ms: string;
    score: number | null;
    comment: string | null;
    satisfaction_ms: string | null;
  }>(
    `SELECT c.visitor_user AS user, COALESCE(c.visitor_user = c.visitor_confirmed_user, false) AS user_confirmed,
            (SELECT m.event FROM messages m
              WHERE m.session_id = c.session_id AND m.author = 'event' AND m.event->>'kind' = 'contact'
              ORDER BY m.seq DESC LIMIT 1) AS contact,
            (extract(epoch FROM c.created_at) * 1000)::bigint AS first_ms,
            c.satisfaction_score AS score, c.satisfaction_comment AS comment,
            (extract(epoch FROM c.satisfaction_at) * 1000)::bigint AS satisfaction_ms
       FROM conversations c WHERE c.session_id = $1`,
    [conversation.session_id],
  );
  const row = res.rows[0];
  const contact = row?.contact?.contact ?? null;
  const earlier = await db.query<{
    session_id: string;
    status: string;
    started_ms: string;
    last_ms: string;
    last: LastMessageRow | null;
    same_user: boolean;
    confirmed: boolean;
  }>(
    `SELECT c.session_id, c.status,
            (extract(epoch FROM c.created_at) * 1000)::bigint AS started_ms,
            (extract(epoch FROM c.last_message_at) * 1000)::bigint AS last_ms,
            (SELECT json_build_object('author', m.author, 'text', m.text, 'at', m.at, 'attachment', m.attachment)
               FROM messages m WHERE m.session_id = c.session_id AND m.author <> 'event'
              ORDER BY m.seq DESC LIMIT 1) AS last,
            COALESCE(c.visitor_user = $3, false) AS same_user,
            -- the same person only when the site confirmed the same user on both sides
            COALESCE($5::boolean AND c.visitor_user = $3 AND c.visitor_confirmed_user = $3, false) AS confirmed
       FROM conversations c
      WHERE c.bot_id = $1 AND c.session_id <> $2
        AND (($3::text IS NOT NULL AND c.visitor_user = $3)
             OR ($4::text IS NOT NULL AND EXISTS (
                  SELECT 1 FROM messages e
                   WHERE e.session_id = c.session_id AND e.author = 'event' AND e.event->>'kind' = 'contact'
                     AND lower(e.event->>'contact') = lower($4))))
      -- confirmed first, so conversations claiming the id cannot push the confirmed ones out of the list
      ORDER BY confirmed DESC, c.last_message_at DESC, c.session_id DESC
      LIMIT ${EARLIER_CONVERSATIONS}`,
    [conversation.bot_id, conversation.session_id, row?.user ?? null, contact, row?.user_confirmed ?? false],
  );
  return {
    user: row?.user ?? null,
    user_confirmed: row?.user_confirmed ?? false,
    name: row?.contact?.name ?? null,
    contact,
    note: row?.contact?.note ?? null,
    first_seen_at: Number(row?.first_ms ?? 0),
    satisfaction:
      row?.score != null ? { score: row.score, comment: row.comment, at: Number(row.satisfaction_ms) } : null,
    earlier: earlier.rows.map((r) => ({
      session_id: r.session_id,
      status: r.status,
      started_at: Number(r.started_ms),
      last_message_at: Number(r.last_ms),
      last_message: lastMessageOf(r.last, mediaBaseUrl),
      linked_by: r.same_user ? ('user' as const) : ('contact' as const),
      confirmed: r.confirmed,
    })),
  };
}
