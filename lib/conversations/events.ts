import { createHash, randomUUID } from 'node:crypto';
import { type Db, withTransaction } from '../db';
import { errors } from '../errors';
import { notify } from '../notifications/service';
import type { ConversationRow } from './sessions';

/**
 * Events (contract, Message): what a visitor does besides writing — a rating of an answer, a contact left — stored as
 * messages with `author: "event"`, which operators see in transcripts and visitors never do (polls skip them).
 */
export interface ContactInput {
  contact: string;
  name?: string;
  note?: string;
}

/**
 * One rating per answer: rating it again replaces the earlier event, deleted and inserted anew in one transaction so
 * a transcript read from a cursor sees the change. 404 for a `ref` that is not a bot message of this conversation.
 */
export async function recordRating(db: Db, conversation: ConversationRow, ref: string, rating: 'up' | 'down') {
  const id = `evt_rating_${createHash('sha256').update(`${conversation.session_id}\n${ref}`).digest('hex').slice(0, 32)}`;
  const event = { kind: 'rating', rating, ref };
  const text = rating === 'up' ? 'Rated an answer as helpful' : 'Rated an answer as not helpful';
  await withTransaction(db, async (tx) => {
    const answer = await tx.query(`SELECT 1 FROM messages WHERE id = $1 AND session_id = $2 AND author = 'bot'`, [
      ref,
      conversation.session_id,
    ]);
    if (!answer.rowCount) throw errors.notFound('No answer of the bot with this id in this conversation');
    await tx.query(`DELETE FROM messages WHERE id = $1`, [id]);
    await tx.query(
      `INSERT INTO messages (id, session_id, bot_id, author, text, event, at) VALUES ($1, $2, $3, 'event', $4, $5, $6)`,
      [id, conversation.session_id, conversation.bot_id, text, event, Date.now()],
    );
  });
}

/** A contact event, and the dashboard notification that announces it, in one transaction. */
export async function recordContact(db: Db, conversation: ConversationRow, contact: ContactInput) {
  const name = contact.name?.trim() || undefined;
  const note = contact.note?.trim() || undefined;
  const event = { kind: 'contact', contact: contact.contact, ...(name ? { name } : {}), ...(note ? { note } : {}) };
  const line = [name, contact.contact].filter(Boolean).join(', ') + (note ? ` — ${note}` : '');
  const id = `evt_contact_${randomUUID().replace(/-/g, '')}`;
  await withTransaction(db, async (tx) => {
    await tx.query(
      `INSERT INTO messages (id, session_id, bot_id, author, text, event, at) VALUES ($1, $2, $3, 'event', $4, $5, $6)`,
      [id, conversation.session_id, conversation.bot_id, `Left a contact: ${line}`, event, Date.now()],
    );
    await notify(tx, {
      id: `ntf_${id}`,
      workspaceId: conversation.workspace_id,
      botId: conversation.bot_id,
      kind: 'contact_left',
      title: 'A visitor left a contact',
      body: line,
      data: { session_id: conversation.session_id, ...event },
    });
  });
}

export interface SatisfactionInput {
  /** 1 (very bad) to 5 (very good). */
  score: number;
  comment?: string;
}

const SCORE_WORDS = ['', 'very bad', 'bad', 'okay', 'good', 'very good'];

/**
 * The visitor's answer to "how did we do?" after a person resolved the conversation: kept on the conversation (for
 * reports) and as a `satisfaction` event in the transcript, one per resolution (answering again replaces both). 409
 * `conflict` when nothing was resolved: there is no help to rate yet.
 */
export async function recordSatisfaction(db: Db, conversation: ConversationRow, input: SatisfactionInput) {
  const comment = input.comment?.trim() || undefined;
  await withTransaction(db, async (tx) => {
    const res = await tx.query<{ resolved_ms: string }>(
      `UPDATE conversations
          SET satisfaction_score = $2, satisfaction_comment = $3, satisfaction_at = now()
        WHERE session_id = $1 AND resolved_at IS NOT NULL
        RETURNING (extract(epoch FROM resolved_at) * 1000)::bigint AS resolved_ms`,
      [conversation.session_id, input.score, comment ?? null],
    );
    if (!res.rowCount)
      throw errors.conflict('This conversation has not been resolved by a person: nothing to rate yet');
    const resolution = res.rows[0].resolved_ms;
    const id = `evt_satisfaction_${createHash('sha256').update(`${conversation.session_id}\n${resolution}`).digest('hex').slice(0, 32)}`;
    const event = { kind: 'satisfaction', score: input.score, ...(comment ? { comment } : {}) };
    const text = `Rated the help ${input.score}/5 (${SCORE_WORDS[input.score]})` + (comment ? `: ${comment}` : '');
    await tx.query(`DELETE FROM messages WHERE id = $1`, [id]);
    await tx.query(
      `INSERT INTO messages (id, session_id, bot_id, author, text, event, at) VALUES ($1, $2, $3, 'event', $4, $5, $6)`,
      [id, conversation.session_id, conversation.bot_id, text, event, Date.now()],
    );
  });
}

/**
 * An internal note of the team on a conversation (the inbox's "Internal note"): an event, so operators see it in the
 * transcript and the visitor never does; it changes no status and sends no webhook. Returns it as the transcript shows
 * it.
 */
export async function recordNote(db: Db, conversation: ConversationRow, note: { text: string; by: string | null }) {
  const id = `evt_note_${randomUUID().replace(/-/g, '')}`;
  const event = { kind: 'note' as const, text: note.text, ...(note.by ? { by: note.by } : {}) };
  const at = Date.now();
  const text = `${note.by ? `${note.by} noted` : 'Note'}: ${note.text}`;
  await db.query(
    `INSERT INTO messages (id, session_id, bot_id, author, text, event, at) VALUES ($1, $2, $3, 'event', $4, $5, $6)`,
    [id, conversation.session_id, conversation.bot_id, text, event, at],
  );
  return { id, author: 'event' as const, text, at, event };
}
