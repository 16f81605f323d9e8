import type { TransitionInput } from '../../workflows/contracts/conversation';
import { chargeModelUse, creditBalanceSql } from '../credits/service';
import { type Db, withTransaction } from '../db';
import { announce, outcomeNotice } from '../announcements';
import { BRIEFING_MESSAGES, type Briefing, type BriefingLine } from './briefing';

const TRANSCRIPT_MESSAGES = 20;

/**
 * What the briefing reads, in one statement: the conversation's last messages, with this transition's own (not yet
 * stored), and whether the workspace has credits left for the model to write it (README, Credits).
 */
async function briefingInput(
  db: Db,
  input: TransitionInput,
): Promise<{ lines: BriefingLine[]; workspaceId: string | null; hasCredits: boolean }> {
  const res = await db.query<{
    workspace_id: string | null;
    balance: number | null;
    lines: { id: string; author: string; text: string }[];
  }>(
    `SELECT w.id AS workspace_id, ${creditBalanceSql('w')} AS balance,
            (SELECT COALESCE(json_agg(json_build_object('id', m.id, 'author', m.author, 'text', m.text) ORDER BY m.seq), '[]'::json)
               FROM (SELECT seq, id, author, text FROM messages
                      WHERE session_id = $1 AND author IN ('visitor', 'bot', 'operator') ORDER BY seq DESC LIMIT ${BRIEFING_MESSAGES}) m) AS lines
       FROM (SELECT 1) one LEFT JOIN bots b ON b.id = $2 LEFT JOIN workspaces w ON w.id = b.workspace_id`,
    [input.sessionId, input.botId],
  );
  const row = res.rows[0];
  const stored = new Set(row.lines.map((r) => r.id));
  // This transition's visitor message counts; its bot messages are the platform's own hand-over words.
  const fresh = input.messages.filter((m) => !stored.has(m.id) && m.author === 'visitor');
  return {
    lines: [...row.lines, ...fresh].map(({ author, text }) => ({ author, text })),
    workspaceId: row.workspace_id,
    hasCredits: (row.balance ?? 0) > 0,
  };
}
const AUTHOR_LABEL: Record<string, string> = { visitor: 'Visitor', bot: 'Bot', operator: 'Operator' };

/**
 * The conversation workflow's writes to the read model (Postgres), one transaction per transition so a visitor
 * never polls a half-applied state. Messages are inserted on their deterministic ids, so a retried activity adds
 * nothing twice; a retried announcement reaches nobody new (the API takes a turn's first). Returns the delivery to
 * start when the transition recorded an outgoing webhook.
 */
export async function applyTransition(
  db: Db,
  input: TransitionInput,
  opts: { brief?: (lines: BriefingLine[], use: { model: boolean }) => Promise<Briefing> } = {},
): Promise<{ deliveryId: string | null }> {
  // A hand-over to the team (not a person taking it over themselves) gets the operator's briefing, written before the
  // transaction: it may wait on the model. The model writes it only while the workspace has credits.
  const handedOver = input.escalated && input.event?.kind === 'escalated' && input.escalationReason !== 'operator';
  const read = handedOver && opts.brief ? await briefingInput(db, input) : null;
  const brief = read && opts.brief ? await opts.brief(read.lines, { model: read.hasCredits }) : null;
  return withTransaction(db, async (client) => {
    // The model's briefing is charged as a run is, with the transition that stores it; once per hand-over (its
    // delivery id, chosen by the workflow), so a retried activity charges nothing more.
    if (brief?.usage && read?.workspaceId && input.event) {
      await chargeModelUse(client, {
        workspaceId: read.workspaceId,
        key: `briefing:${input.event.deliveryId}`,
        reason: 'operator briefing',
        ...brief.usage,
      });
    }
    for (const m of input.messages) {
      await client.query(
        // The platform's own words (a hand-over's, an away message) follow what is already there: the workflow's
        // clock may be behind the answer the turn's activity stored a moment ago, and transcripts read by time.
        `INSERT INTO messages (id, session_id, bot_id, author, text, at, attachment, author_name)
         SELECT $1, $2, $3, $4, $5,
                CASE WHEN $4 = 'bot' THEN GREATEST($6, (SELECT max(at) + 1 FROM messages WHERE session_id = $2)) ELSE $6 END,
                $7, $8
         ON CONFLICT (id) DO NOTHING`,
        [m.id, input.sessionId, input.botId, m.author, m.text, m.at, m.attachment ?? null, m.authorName ?? null],
      );
    }
    await client.query(
      `UPDATE conversations
              SET status = COALESCE($2, status),
                  escalated_at = CASE WHEN $3 THEN now() ELSE escalated_at END,
                  escalation_reason = CASE WHEN $3 THEN $8 ELSE escalation_reason END,
                  -- handed over outside business hours: the visitor was told when the team is back
                  after_hours = CASE WHEN $3 THEN $9 ELSE after_hours END,
                  team_back_at = CASE WHEN $3 THEN to_timestamp($10::double precision / 1000) ELSE team_back_at END,
                  briefing = CASE WHEN $3 THEN $11 ELSE briefing END,
                  briefing_source = CASE WHEN $3 THEN $12 ELSE briefing_source END,
                  briefing_at = CASE WHEN $3 AND $11::text IS NOT NULL THEN now() WHEN $3 THEN NULL ELSE briefing_at END,
                  resolved_at = CASE WHEN $4 THEN now() WHEN $3 THEN NULL ELSE resolved_at END,
                  -- a new request starts unread; operator_here is about the current one
                  operator_seen_at = CASE WHEN $3 OR $4 THEN NULL ELSE operator_seen_at END,
                  -- a reply ends its writer's typing signal (the visitor's dots, the team's "is replying")
                  operator_typing_until = CASE WHEN $4 OR $7 THEN NULL ELSE operator_typing_until END,
                  visitor_user = COALESCE($5, visitor_user),
                  -- the user a visitor confirmation named, kept beside the latest one said (lib/conversations/views.ts)
                  visitor_confirmed_user = CASE WHEN $13::boolean THEN $5 ELSE visitor_confirmed_user END,
                  last_message_at = CASE WHEN $6 THEN now() ELSE last_message_at END
            WHERE session_id = $1`,
      [
        input.sessionId,
        input.status ?? null,
        input.escalated ?? false,
        input.resolved ?? false,
        input.user ?? null,
        input.messages.length > 0,
        input.messages.some((m) => m.author === 'operator'),
        input.escalated ? (input.escalationReason ?? null) : null,
        input.afterHours !== undefined,
        input.afterHours?.backAt ?? null,
        brief?.text ?? null,
        brief?.source ?? null,
        input.userConfirmed === true && input.user !== undefined,
      ],
    );
    // A visitor asked for a person, or the agent could not answer and handed over: the team is told in the dashboard
    // (a notification, in this transaction, on an id the workflow chose, so a retry adds nothing twice). An operator
    // taking a conversation over is no request.
    if (input.escalated && input.status === 'waiting' && input.event?.kind === 'escalated') {
      await client.query(
        `INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data)
         SELECT $1, b.workspace_id, b.id, 'handoff_requested', $4,
                b.name || ': ' || COALESCE((SELECT left(text, 200) FROM messages
                                             WHERE session_id = $3 AND author = 'visitor' AND text <> ''
                                             ORDER BY seq DESC LIMIT 1), 'no message yet'),
                jsonb_build_object('session_id', $3::text)
           FROM bots b WHERE b.id = $2
         ON CONFLICT (id) DO NOTHING`,
        [
          `ntf_${input.event.deliveryId}`,
          input.botId,
          input.sessionId,
          input.escalationReason === 'unanswered'
            ? 'The agent could not answer a visitor and handed over'
            : 'A visitor asked for a person',
        ],
      );
    }

    let deliveryId: string | null = null;
    if (input.event) {
      const bot = await client.query<{ handoff_webhook_url: string | null }>(
        `SELECT handoff_webhook_url FROM bots WHERE id = $1`,
        [input.botId],
      );
      const url = bot.rows[0]?.handoff_webhook_url;
      if (url) {
        const body: Record<string, unknown> = {
          event: input.event.kind,
          bot_id: input.botId,
          session_id: input.sessionId,
          at: input.event.at,
        };
        if (input.event.kind === 'escalated') {
          const recent = await client.query<{ author: string; text: string }>(
            `SELECT author, CASE WHEN attachment IS NOT NULL AND text = '' THEN '[image]' ELSE text END AS text
               FROM (SELECT seq, author, text, attachment FROM messages WHERE session_id = $1 AND author <> 'event'
                      ORDER BY seq DESC LIMIT ${TRANSCRIPT_MESSAGES}) m ORDER BY seq`,
            [input.sessionId],
          );
          body.transcript = recent.rows.map((r) => `${AUTHOR_LABEL[r.author] ?? r.author}: ${r.text}`).join('\n');
          // Additive: why it was handed over (requested, unanswered, operator).
          if (input.escalationReason) body.reason = input.escalationReason;
          // Additive: the briefing, and who wrote it — `model` is the platform's model, which what visitors wrote may
          // have steered; `extractive` quotes the conversation.
          if (brief) {
            body.briefing = brief.text;
            body.briefing_source = brief.source;
          }
        }
        if (input.event.kind === 'visitor_message') body.text = input.event.text ?? '';
        await client.query(
          `INSERT INTO webhook_deliveries (id, bot_id, session_id, event, url, body) VALUES ($1, $2, $3, $4, $5, $6)
               ON CONFLICT (id) DO NOTHING`,
          [input.event.deliveryId, input.botId, input.sessionId, input.event.kind, url, JSON.stringify(body)],
        );
        deliveryId = input.event.deliveryId;
      }
    }
    // The chat turn this transition ends (a hand-over, a message forwarded to a person) is announced at its commit:
    // a client that polls after `handoff: true` reads the new status.
    if (input.announce) await announce(client, outcomeNotice(input.announce.turnId, input.announce.result));
    return { deliveryId };
  });
}
