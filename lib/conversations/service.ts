import { WorkflowNotFoundError } from '@temporalio/client';
import { createHash, randomUUID } from 'node:crypto';
import { failureInfo } from '../../workflows/failures';
import { type AnswerSource, runWorkflowId } from '../../workflows/contracts/agent-run';
import {
  type HandoffResult,
  type MessageAttachment,
  type OperatorReplyResult,
  type ResolveResult,
  type TurnResult,
  conversationWorkflowId,
  handoffUpdate,
  operatorReplyUpdate,
  resolveUpdate,
  visitorAttachmentUpdate,
} from '../../workflows/contracts/conversation';
import { type Db, withTransaction } from '../db';
import { type ApiError, apiErrorForFailure, errors, isUnavailableError, SERVICE_RETRY_AFTER_SECONDS } from '../errors';
import { signVisitorConfirmation } from '../identity';
import { LIMITS } from '../limits';
import type { SecretBox } from '../secret-box';
import { type DeltaHub, createStreamAssembler } from '../streams';
import type { Temporal } from '../temporal';
import type { MediaService } from '../media/service';
import { answerMessageId } from '../runs/bookkeeping';
import {
  type ContactInput,
  type SatisfactionInput,
  recordContact,
  recordNote,
  recordRating,
  recordSatisfaction,
} from './events';
import { type AttachmentView, type PollResult, attachmentView, pollMessages } from './poll';
import {
  type InboxOptions,
  type Page,
  listInbox,
  listThreads,
  readTranscript,
  readVisitorPanel,
  type VisitorPanel,
} from './views';
import {
  type ChatInput,
  type ConversationDeps,
  type ConversationRow,
  type PreparedChat,
  type TurnSubscription,
  TurnNotSentError,
  TurnTimeoutError,
  findConversation,
  firstOutcome,
  loadBot,
  handoffAfterHours,
  prepareChat,
  runTurn,
  quotaExceededReply,
  startConversation,
  subscribeTurn,
  updateConversation,
  updateFailureType,
} from './turn';

export type { ChatInput } from './turn';

export interface ConversationServiceDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  /** A chat turn that takes longer answers `llm_overloaded` (LLM_TURN_TIMEOUT_MS). */
  turnTimeoutMs: number;
  /** Committed answers and stream fragments (API processes); without it answers come from the workflow update. */
  deltaHub?: DeltaHub;
  /** Images visitors attach: stored with their conversation, erased with it. */
  media: MediaService;
}

/** Spec, ChatResponse: one of its three modes. */
export interface ChatReply {
  answer: string;
  session_id: string;
  /** The knowledge sources the answer used (docs/decisions/058-answers-cite-sources.md). */
  sources?: AnswerSource[];
  /** The agent could not answer and offers a person (docs/decisions/059-agent-knows-its-limits.md). */
  handoff_offered?: true;
  /** Handed over outside business hours: when the team is back; the answer asks for a contact. */
  after_hours?: AfterHoursView;
  handoff?: true;
  quota_exceeded?: true;
  notice?: 'outage';
}

/**
 * A failed turn as a stream's error frame. Spec: only `llm_unavailable` and `llm_overloaded` frames carry `code` (and
 * the latter `retry_after`); an internal error frame has none.
 */
function errorFrame(e: ApiError): StreamFrame {
  return e.code === 'llm_unavailable' || e.code === 'llm_overloaded'
    ? {
        error: e.message,
        code: e.code,
        ...(e.extra.retry_after ? { retry_after: e.extra.retry_after as number } : {}),
      }
    : { error: e.message };
}

/** Spec, chat/stream frames: a fragment, an error, or the end frame. */
export type StreamFrame =
  | { delta: string; notice?: 'outage' }
  | { error: string; code?: string; retry_after?: number }
  | {
      done: true;
      session_id: string;
      handoff: boolean;
      quota_exceeded: boolean;
      notice?: 'outage';
      sources?: AnswerSource[];
      handoff_offered?: true;
      after_hours?: AfterHoursView;
    };

/** A chat turn's reply, and the ids of the messages it wrote (the widget rates answers by their id). */
/** When the team is back after a handoff outside business hours (Unix ms; null: no opening ahead). */
export interface AfterHoursView {
  back_at: number | null;
}

function afterHoursField(result: TurnResult): { after_hours?: AfterHoursView } {
  return result.afterHours ? { after_hours: { back_at: result.afterHours.backAt } } : {};
}

export interface ChatTurn {
  reply: ChatReply;
  /** The visitor's message, absent when nothing was stored (monthly quota used up). */
  visitorMessageId?: string;
  /** The bot's answer, present when the bot answered. */
  answerMessageId?: string;
}

export interface ChatStream {
  sessionId: string;
  /**
   * The visitor's message of this turn; absent when nothing is stored (monthly quota used up, or — once `run` has
   * written its error frame — the turn could not be sent at all).
   */
  visitorMessageId?: string;
  /** The id the bot's answer gets if the bot answers (not when handed over, failed or over quota). */
  answerMessageId?: string;
  /**
   * Set before the end frame: an error frame was written while the turn goes on (the API stopped waiting, or
   * Temporal was out of reach after it began) or completed anyway — its answer is or will be in the transcript.
   */
  answerPending?: boolean;
  /**
   * Runs the turn, writing its frames; always ends with the end frame and never throws. `turnPending`: an error frame
   * was written while the turn went on or completed anyway (a retry of the same request joins that turn).
   */
  run(
    write: (frame: StreamFrame) => void,
    log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  ): Promise<{ turnPending: boolean }>;
}

export type { Page } from './views';

/**
 * Deletes every run of a workflow id from Temporal (visibility lists the runs a continue-as-new left behind; the
 * latest run is deleted by id as well, in case visibility has not caught up). Not found is fine.
 */
async function deleteWorkflowHistories(temporal: Temporal, workflowId: string): Promise<void> {
  const runIds = new Set<string | undefined>([undefined]);
  const quoted = `'${workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = ${quoted}` })) {
    runIds.add(execution.runId);
  }
  for (const runId of runIds) {
    try {
      await temporal.connection.workflowService.deleteWorkflowExecution({
        namespace: temporal.namespace,
        workflowExecution: { workflowId, ...(runId ? { runId } : {}) },
      });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) && (err as { code?: number }).code !== 5 /* NOT_FOUND */) throw err;
    }
  }
}

/** Seconds a client should wait after a turn the API stopped waiting for. */
const TURN_TIMEOUT_RETRY_AFTER = 10;

/** The failures of turns the API stopped waiting for: the turn goes on, and a retry of the request joins it. */
const STILL_RUNNING = new WeakSet<NonNullable<TurnResult['error']>>();

/**
 * The failures of turns that never reached a worker because the conversation's workflow task keeps failing: nothing
 * of them is stored, and a retry sends them afresh (a stream's end frame names no visitor message).
 */
const NOT_SENT = new WeakSet<NonNullable<TurnResult['error']>>();

/** A turn the API itself answers `llm_overloaded`, marked with what became of it (STILL_RUNNING or NOT_SENT). */
function overloadedResult(
  message: string,
  retryAfter: number,
  mark: WeakSet<NonNullable<TurnResult['error']>>,
): TurnResult {
  const error = { type: 'llm_overloaded' as const, message, retryAfter };
  mark.add(error);
  return { answer: '', error };
}

/**
 * Temporal or Postgres out of reach during a turn answered as JSON: 503 `service_unavailable`, as the error handler
 * answers any unreachable dependency. Unless the turn is known never to have reached a worker (TurnNotSentError), it
 * may have begun, and it goes on: a retry with the same `Idempotency-Key` joins it (the same update id) instead of
 * sending the visitor's message a second time. Any other error is returned as it is.
 */
export function unavailableTurnError(err: unknown): unknown {
  if (!isUnavailableError(err) || err instanceof TurnNotSentError) return err;
  const e = errors.serviceUnavailable();
  e.turnPending = true;
  e.cause = err;
  return e;
}

/** Spec, Conversation: 503 `{error, code, session_id}`, plus `retry_after` and `Retry-After` when overloaded. */
function turnError(error: NonNullable<TurnResult['error']>, sessionId: string): ApiError {
  const e = apiErrorForFailure(error, { session_id: sessionId });
  e.turnPending = STILL_RUNNING.has(error);
  return e;
}

/**
 * The id of a person's message (a reply, an image): from its scope when the request named one (the same reply sent
 * again is the same message, which the conversation applies once), else a new one.
 */
function operatorMessageId(kind: 'reply' | 'attach', scope: string | undefined): string {
  if (!scope) return `msg_op_${randomUUID()}`;
  return `msg_op_${createHash('sha256').update(`${kind}\n${scope}`).digest('hex').slice(0, 32)}`;
}

/**
 * Conversations (DESIGN.md, Who owns what): chat turns, handoff, polling, typing, the operator's side, and erasing
 * a visitor. Every surface — the HTTP API, the widget, the dashboard's test chat — calls these functions; each owns
 * its SQL and its Temporal calls, and answers failures as `ApiError`s in the spec's shape.
 */
export function createConversationService(deps: ConversationServiceDeps) {
  const cdeps: ConversationDeps = deps;

  /** Runs the turn and resolves with its first known outcome; a turn the API stopped waiting for is `llm_overloaded`. */
  function turnOutcome(
    prepared: Extract<PreparedChat, { kind: 'turn' }>,
    subscription: TurnSubscription | null,
    streamTurnId?: string,
  ) {
    return firstOutcome(runTurn(cdeps, prepared, streamTurnId), subscription).catch((err) => {
      if (err instanceof TurnTimeoutError) {
        return overloadedResult('The turn did not finish in time', TURN_TIMEOUT_RETRY_AFTER, STILL_RUNNING);
      }
      if (err instanceof TurnNotSentError && err.busy) {
        return overloadedResult('The conversation is busy', SERVICE_RETRY_AFTER_SECONDS, NOT_SENT);
      }
      throw err;
    });
  }

  /** The conversation of this bot, or 404 `not_found` (also for another bot's session: spec, bound at first use). */
  async function conversationOf(botId: string, sessionId: string): Promise<ConversationRow> {
    const conversation = await findConversation(deps.db, botId, sessionId);
    if (!conversation) throw errors.notFound('No conversation with this session_id');
    return conversation;
  }

  /**
   * The signed-in person as the bot's administrator for one test-chat turn (spec, Visitor identity rule 6): a visitor
   * confirmation signed with the bot's identity secret, valid five minutes.
   */
  async function adminConfirmation(botId: string, userId: string): Promise<string> {
    const bot = await loadBot(deps.db, botId);
    return signVisitorConfirmation(
      { user: `dashboard:${userId}`, role: 'admin', bot: botId, exp: Math.floor(Date.now() / 1000) + 300 },
      deps.secrets.open(bot.identity_secret_sealed),
    );
  }

  /** The first word of a person's name, as the visitor is told who answered; none without a name. */
  async function firstNameOf(userId: string): Promise<string | undefined> {
    const res = await deps.db.query<{ name: string | null }>(`SELECT name FROM users WHERE id = $1`, [userId]);
    return res.rows[0]?.name?.trim().split(/\s+/)[0] || undefined;
  }

  /**
   * Stores an image of the conversation (lib/media: checked, quotas) and has `send` write the message `messageId`
   * holding it. When that fails and no message holds the file (Temporal unreachable, the update refused), the file
   * is discarded; if the update did apply and only its answer was lost, the message holds the file and it stays.
   */
  async function withStoredImage(
    conversation: ConversationRow,
    bytes: Buffer,
    messageId: string,
    mediaBaseUrl: string,
    send: (attachment: MessageAttachment, url: string) => Promise<unknown>,
  ): Promise<AttachmentView> {
    const attachment = await deps.media.save({ botId: conversation.bot_id, sessionId: conversation.session_id, bytes });
    const view = attachmentView(attachment, mediaBaseUrl);
    try {
      await send(attachment, view.url);
    } catch (err) {
      const held = await deps.db
        .query(`SELECT 1 FROM messages WHERE id = $1`, [messageId])
        .then((r) => Boolean(r.rowCount))
        .catch(() => true);
      if (!held) await deps.media.discard(attachment.id).catch(() => undefined);
      throw err;
    }
    return view;
  }

  const service = {
    /** One chat turn answered as one JSON body (`POST /v1/api/chat`). */
    async answer(botId: string, input: ChatInput, turnScope?: string): Promise<ChatReply> {
      return (await service.converse(botId, input, turnScope)).reply;
    },

    /** A chat turn with the ids of the messages it wrote (the widget's chat). */
    async converse(botId: string, input: ChatInput, turnScope?: string): Promise<ChatTurn> {
      const prepared = await prepareChat(cdeps, botId, input, turnScope);
      if (prepared.kind === 'quota_exceeded') {
        return {
          reply: quotaExceededReply(prepared.sessionId),
        };
      }
      const subscription = await subscribeTurn(cdeps, prepared.update.runId);
      const result = await turnOutcome(prepared, subscription)
        .catch((err) => {
          throw unavailableTurnError(err);
        })
        .finally(() => subscription?.close());
      if (result.error) throw turnError(result.error, prepared.sessionId);
      return {
        reply: {
          answer: result.answer,
          session_id: prepared.sessionId,
          ...(result.sources ? { sources: result.sources } : {}),
          ...(result.handoff ? { handoff: true as const } : {}),
          ...(result.handoffOffered ? { handoff_offered: true as const } : {}),
          ...afterHoursField(result),
        },
        visitorMessageId: prepared.update.messageId,
        ...(result.handoff ? {} : { answerMessageId: answerMessageId(prepared.update.runId) }),
      };
    },

    /**
     * The dashboard's test chat (spec, Visitor identity rule 6): a turn in which the signed-in user is confirmed as
     * the bot's administrator, with a confirmation signed by the bot's own identity secret.
     */
    async testChat(botId: string, userId: string, input: { session_id?: string; message: string }): Promise<ChatReply> {
      return service.answer(botId, { ...input, user_auth: await adminConfirmation(botId, userId) });
    },

    /** The test chat streamed, as `/chat/stream` streams a visitor's turn (the dashboard's test chat). */
    async testChatStream(
      botId: string,
      userId: string,
      input: { session_id?: string; message: string },
    ): Promise<ChatStream> {
      return service.openStream(botId, { ...input, user_auth: await adminConfirmation(botId, userId) });
    },

    /**
     * `/chat/stream`: everything that can fail with an ordinary JSON error (binding, quota, the stream listener)
     * happens here; `run` then writes the frames. It subscribes to the turn's fragments before sending the turn, and
     * always ends with the end frame (spec, chat/stream). If the model's first attempt was cut off and a retry
     * produced a different text, the fragments already sent cannot be taken back: an error frame without `code`
     * says so, and the full answer is in the transcript.
     */
    async openStream(botId: string, input: ChatInput, turnScope?: string): Promise<ChatStream> {
      const prepared = await prepareChat(cdeps, botId, input, turnScope);
      const sessionId = prepared.sessionId;
      if (prepared.kind === 'quota_exceeded') {
        return {
          sessionId,
          async run(write) {
            const { answer, notice } = quotaExceededReply(sessionId);
            write({ delta: answer, notice });
            write({ done: true, session_id: sessionId, handoff: false, quota_exceeded: true, notice });
            return { turnPending: false };
          },
        };
      }
      let write: (frame: StreamFrame) => void = () => undefined;
      const assembled = createStreamAssembler();
      const subscription = await subscribeTurn(cdeps, prepared.update.runId, (msg) => {
        const fresh = assembled.add(msg);
        if (fresh) write({ delta: fresh });
      });
      if (!subscription) throw errors.serviceUnavailable('Streaming is temporarily unavailable; retry shortly');

      const stream: ChatStream = {
        sessionId,
        visitorMessageId: prepared.update.messageId,
        answerMessageId: answerMessageId(prepared.update.runId),
        async run(sink, log) {
          write = sink;
          let handoff = false;
          let turnPending = false;
          let answerExtras: { sources?: AnswerSource[]; handoff_offered?: true; after_hours?: AfterHoursView } = {};
          try {
            const result = await turnOutcome(prepared, subscription, prepared.update.runId);
            handoff = result.handoff === true;
            if (result.error) {
              const e = turnError(result.error, sessionId);
              turnPending = e.turnPending;
              if (NOT_SENT.has(result.error)) stream.visitorMessageId = undefined;
              write(errorFrame(e));
            } else if (handoff) {
              // Escalation arrives as an ordinary fragment — after what was streamed of it when the agent said it
              // cannot answer and handed over; with an operator already live there is none.
              const shown = assembled.shown;
              const rest = result.answer.startsWith(shown) ? result.answer.slice(shown.length) : result.answer;
              if (rest) write({ delta: rest });
              answerExtras = afterHoursField(result);
            } else {
              const final = result.answer;
              // Fragments published before the turn completed may still be on their way through LISTEN — unless the
              // answer's announcement came, after which none will: the worker leaves the end of an announced answer
              // to it (activities/agent-run.ts), and this writes what the fragments did not show.
              const settleBy = Date.now() + 1_000;
              const shown = () => assembled.shown;
              while (
                !subscription.answered &&
                !assembled.diverged &&
                shown().length < final.length &&
                final.startsWith(shown()) &&
                Date.now() < settleBy
              ) {
                await new Promise((r) => setTimeout(r, 10));
              }
              if (final.startsWith(shown()) && !assembled.diverged) {
                if (final.length > shown().length) write({ delta: final.slice(shown().length) });
                answerExtras = {
                  ...(result.sources ? { sources: result.sources } : {}),
                  ...(result.handoffOffered ? { handoff_offered: true as const } : {}),
                };
              } else {
                turnPending = true; // the turn did answer: a retry joins it and receives the whole answer
                write({
                  error: 'The answer was interrupted and regenerated; the complete answer is in the transcript',
                });
              }
            }
          } catch (err) {
            if (isUnavailableError(err)) {
              // Temporal or Postgres out of reach: the JSON endpoint answers 503 `service_unavailable`, but a stream
              // has begun and its frames have no such code; `llm_overloaded` is the one that says retry, and when.
              log.warn({ err }, 'stream turn could not be sent: a dependency is unavailable');
              // Known not to have reached a worker: the visitor's message is not stored either (the widget gives its
              // text back to be sent again, where a stored one would be sent twice).
              if (err instanceof TurnNotSentError) stream.visitorMessageId = undefined;
              // Otherwise the turn has begun (or may have): it goes on, and its answer may yet come.
              else turnPending = true;
              write(
                errorFrame(
                  apiErrorForFailure({ type: 'llm_overloaded', message: '', retryAfter: SERVICE_RETRY_AFTER_SECONDS }),
                ),
              );
            } else {
              log.error({ err }, 'stream turn failed');
              write(errorFrame(errors.internal()));
            }
          } finally {
            subscription.close();
            stream.answerPending = turnPending;
            write({
              done: true,
              session_id: sessionId,
              handoff,
              quota_exceeded: false,
              ...answerExtras,
            });
          }
          return { turnPending };
        },
      };
      return stream;
    },

    /**
     * `POST /v1/api/handoff`: 404 when handoff is off for the bot or the session is another bot's. A session with no
     * message yet (a "talk to a person" button pressed first) starts here, bound to this bot, and goes to `waiting`
     * with `escalated` sent; a used-up monthly quota starts nothing (`quota_exceeded`, as a chat would answer).
     */
    async handoff(
      botId: string,
      sessionId: string,
    ): Promise<{ status: HandoffResult['status']; quota_exceeded?: true; after_hours?: AfterHoursView }> {
      const bot = await loadBot(deps.db, botId);
      if (!bot.handoff_enabled) throw errors.notFound('Handoff is disabled for this bot');
      const conversation =
        (await findConversation(deps.db, bot.id, sessionId)) ??
        (await startConversation(deps.db, bot, sessionId, { checkQuota: true }));
      if (!conversation) return { status: 'bot', quota_exceeded: true };
      try {
        const afterHours = handoffAfterHours(bot);
        const result = await updateConversation(deps, conversation, handoffUpdate, [
          { handoffEnabled: bot.handoff_enabled, at: Date.now(), ...(afterHours ? { afterHours } : {}) },
        ]);
        return {
          status: result.status,
          ...(result.afterHours ? { after_hours: { back_at: result.afterHours.backAt } } : {}),
        };
      } catch (err) {
        // The workflow decides with the settings it was sent; its refusal (`handoff_disabled`) is the same 404.
        if (updateFailureType(err)) throw apiErrorForFailure(failureInfo(err));
        throw err;
      }
    },

    /**
     * `GET /v1/api/messages`, the hottest path: one indexed query, no Temporal. `mediaBaseUrl` is where attachments
     * are fetched (`{base}/media/{id}`).
     */
    poll(
      botId: string,
      sessionId: string,
      cursor: string | undefined,
      mediaBaseUrl: string,
      opts: { forWidget?: boolean } = {},
    ): Promise<PollResult> {
      return pollMessages(deps.db, botId, sessionId, cursor, mediaBaseUrl, opts);
    },

    /** The visitor is typing: shown to operators for about 6 seconds. */
    async visitorTyping(botId: string, sessionId: string): Promise<void> {
      const res = await deps.db.query(
        `UPDATE conversations SET visitor_typing_until = now() + make_interval(secs => $3::double precision / 1000)
          WHERE session_id = $1 AND bot_id = $2`,
        [sessionId, botId, LIMITS.operatorTypingMs],
      );
      if (!res.rowCount) throw errors.notFound('No conversation with this session_id');
    },

    /**
     * Deletes everything stored about one visitor (by `user_token`/confirmed user, by session, or both):
     * conversations, messages, runs, webhook records, and the workflow histories that hold their texts.
     */
    async eraseVisitor(
      botId: string,
      who: { user_token?: string; session_id?: string },
    ): Promise<{ conversations: number }> {
      const sessions = await deps.db.query<{ session_id: string }>(
        `SELECT session_id FROM conversations WHERE bot_id = $1 AND (session_id = $2 OR visitor_user = $3)`,
        [botId, who.session_id ?? null, who.user_token ?? null],
      );
      const ids = sessions.rows.map((r) => r.session_id);
      const runs = await deps.db.query<{ id: string }>(
        `SELECT id FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`,
        [botId, ids],
      );
      const runIds = runs.rows.map((r) => r.id);
      const approvals = await deps.db.query<{ id: string; workflow_id: string }>(
        `SELECT id, workflow_id FROM action_approvals WHERE bot_id = $1 AND run_id = ANY($2)`,
        [botId, runIds],
      );
      // Workflow histories hold message texts and action arguments too: every run of each workflow id (a
      // conversation continues as new, so it has several) is deleted before the rows that point at them.
      const workflowIds = [
        ...ids.map((sid) => conversationWorkflowId(botId, sid)),
        ...runIds.map((id) => runWorkflowId(id)),
        ...approvals.rows.map((a) => a.workflow_id).filter((id) => id.startsWith('approval/')),
      ];
      for (const workflowId of workflowIds) await deleteWorkflowHistories(deps.temporal, workflowId);
      // Attached images leave their store first; their rows go with the conversations.
      await deps.media.deleteForSessions(botId, ids);
      const approvalIds = approvals.rows.map((a) => a.id);
      await withTransaction(deps.db, async (tx) => {
        // Notifications quote an approval's arguments: they go with it.
        await tx.query(`DELETE FROM notifications WHERE bot_id = $1 AND id = ANY($2)`, [
          botId,
          approvalIds.map((id) => `ntf_${id}`),
        ]);
        await tx.query(`DELETE FROM action_approvals WHERE bot_id = $1 AND id = ANY($2)`, [botId, approvalIds]);
        await tx.query(`DELETE FROM webhook_deliveries WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        await tx.query(`DELETE FROM runs WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
        // Stored answers of idempotent requests repeat the visitor's words: those of this bot's keys go too.
        await tx.query(
          `DELETE FROM idempotency_keys WHERE session_id = ANY($2)
              AND (api_key_id IN (SELECT id FROM api_keys WHERE bot_id = $1) OR api_key_id = 'public:' || $1)`,
          [botId, ids],
        );
        await tx.query(`DELETE FROM conversations WHERE bot_id = $1 AND session_id = ANY($2)`, [botId, ids]);
      });
      return { conversations: ids.length };
    },

    /**
     * A visitor rates one of the bot's answers (spec, Message: a `rating` event); rating it again replaces the rating.
     * 404 for an answer that is not the bot's in this conversation.
     */
    async rate(botId: string, sessionId: string, ref: string, rating: 'up' | 'down'): Promise<void> {
      await recordRating(deps.db, await conversationOf(botId, sessionId), ref, rating);
    },

    /** The visitor says how the help went once a person resolved the conversation (409 before any resolution). */
    async rateSatisfaction(botId: string, sessionId: string, input: SatisfactionInput): Promise<void> {
      await recordSatisfaction(deps.db, await conversationOf(botId, sessionId), input);
    },

    /**
     * A visitor leaves a way to reach them (spec, Message: a `contact` event), also a dashboard notification. Accepted
     * before any message and with the monthly quota used up: it is how a visitor reaches the team when the chat
     * cannot (docs/decisions/078-ratings-contacts-events.md), so the conversation starts here without the quota check.
     */
    async leaveContact(botId: string, sessionId: string, contact: ContactInput): Promise<void> {
      const bot = await loadBot(deps.db, botId);
      const conversation =
        (await findConversation(deps.db, bot.id, sessionId)) ??
        (await startConversation(deps.db, bot, sessionId, { checkQuota: false }));
      if (!conversation) throw errors.notFound('No conversation with this session_id');
      await recordContact(deps.db, conversation, contact);
    },

    /**
     * A visitor attaches an image (the widget): checked and stored (lib/media), then a message of the conversation
     * holding it, written by the conversation workflow so it lands in order and, while a person handles the
     * conversation, is forwarded to them (`visitor_message`). A new conversation counts against the monthly quota
     * like a first message; over it, nothing is stored.
     */
    async attach(
      botId: string,
      sessionId: string,
      bytes: Buffer,
      opts: { mediaBaseUrl: string; user?: string },
    ): Promise<
      | {
          kind: 'stored';
          message: { id: string; author: 'visitor'; text: string; at: number; attachment: AttachmentView };
        }
      | { kind: 'quota_exceeded'; reply: ChatReply }
    > {
      const bot = await loadBot(deps.db, botId);
      const conversation =
        (await findConversation(deps.db, bot.id, sessionId)) ??
        (await startConversation(deps.db, bot, sessionId, { checkQuota: true }));
      if (!conversation) {
        return {
          kind: 'quota_exceeded',
          reply: quotaExceededReply(sessionId),
        };
      }
      const message = { id: `msg_${randomUUID().replace(/-/g, '')}`, at: Date.now() };
      const view = await withStoredImage(conversation, bytes, message.id, opts.mediaBaseUrl, (attachment, url) =>
        updateConversation(
          deps,
          conversation,
          visitorAttachmentUpdate,
          [{ messageId: message.id, attachment, url, at: message.at, user: opts.user }],
          message.id,
        ),
      );
      return {
        kind: 'stored',
        message: { id: message.id, author: 'visitor', text: '', at: message.at, attachment: view },
      };
    },

    /**
     * An operator sends an image from the dashboard: checked and stored like a visitor's (same limits and quotas),
     * then an operator reply holding it, signed with the person's first name; the visitor's widget shows it at the
     * next poll and the conversation becomes `operator`, as with a written reply.
     */
    async operatorAttach(
      botId: string,
      sessionId: string,
      bytes: Buffer,
      opts: { mediaBaseUrl: string; userId: string; replyScope?: string },
    ) {
      const conversation = await conversationOf(botId, sessionId);
      const messageId = operatorMessageId('attach', opts.replyScope);
      if (opts.replyScope) {
        // Sent again after its answer was lost: the message is there already, and its image is not stored twice.
        const sent = await deps.db.query<{ at: string; attachment: MessageAttachment }>(
          `SELECT at, attachment FROM messages WHERE id = $1 AND session_id = $2 AND attachment IS NOT NULL`,
          [messageId, sessionId],
        );
        if (sent.rows[0]) {
          const { at, attachment } = sent.rows[0];
          return {
            message: {
              id: messageId,
              author: 'operator' as const,
              text: '',
              at: Number(at),
              attachment: attachmentView(attachment, opts.mediaBaseUrl),
            },
            status: conversation.status,
          };
        }
      }
      const authorName = await firstNameOf(opts.userId);
      const at = Date.now();
      let result: OperatorReplyResult | undefined;
      const view = await withStoredImage(conversation, bytes, messageId, opts.mediaBaseUrl, async (attachment) => {
        result = await updateConversation(
          deps,
          conversation,
          operatorReplyUpdate,
          [{ messageId, text: '', at, attachment, ...(authorName ? { authorName } : {}) }],
          messageId,
        );
      });
      return {
        message: { id: messageId, author: 'operator' as const, text: '', at, attachment: view },
        status: result!.status,
      };
    },

    /** Open requests (handed to a person, `waiting` or `operator`), most recently handed over first. */
    listThreads: (botId: string, page: Page) => listThreads(deps.db, botId, page),

    /**
     * The dashboard's inbox: conversations of every bot of a workspace (or one), with the bot's name. `open`: requests
     * handed to a person, as the operator API lists them; `all`: every conversation, latest activity first.
     */
    inbox: (workspaceId: string, opts: InboxOptions) => listInbox(deps.db, workspaceId, opts),

    /** The full transcript, messages and events; opening it tells the visitor an operator is reading. */
    async transcript(
      botId: string,
      sessionId: string,
      page: Page,
      mediaBaseUrl: string,
      opts: { authorNames?: boolean } = {},
    ) {
      return readTranscript(deps.db, await conversationOf(botId, sessionId), page, mediaBaseUrl, opts);
    },

    /** Who the visitor is and their other conversations with the agent: the inbox's visitor panel. */
    async visitorPanel(botId: string, sessionId: string): Promise<VisitorPanel> {
      return readVisitorPanel(deps.db, await conversationOf(botId, sessionId));
    },

    /** An operator reply: reaches the visitor at the next poll; the conversation becomes `operator`. */
    async operatorReply(
      botId: string,
      sessionId: string,
      text: string,
      replyScope?: string,
      authorName?: string,
    ): Promise<OperatorReplyResult> {
      const conversation = await conversationOf(botId, sessionId);
      // A retried reply (same Idempotency-Key) is the same update: Temporal applies it once.
      const messageId = operatorMessageId('reply', replyScope);
      return updateConversation(
        deps,
        conversation,
        operatorReplyUpdate,
        [{ messageId, text, at: Date.now(), ...(authorName ? { authorName } : {}) }],
        messageId,
      );
    },

    /**
     * A reply from the dashboard: the visitor sees the replying person's name (their first word of it). `replyScope`:
     * the same reply sent again (its Idempotency-Key) is the same message.
     */
    async operatorReplyFrom(botId: string, sessionId: string, text: string, userId: string, replyScope?: string) {
      return service.operatorReply(botId, sessionId, text, replyScope, await firstNameOf(userId));
    },

    /** An internal note of the team (never shown to the visitor), signed with the writer's name. */
    async addNote(botId: string, sessionId: string, text: string, userId: string) {
      const conversation = await conversationOf(botId, sessionId);
      const res = await deps.db.query<{ name: string | null; email: string }>(
        `SELECT name, email FROM users WHERE id = $1`,
        [userId],
      );
      const by = res.rows[0] ? res.rows[0].name?.trim() || res.rows[0].email : null;
      return recordNote(deps.db, conversation, { text, by });
    },

    /**
     * The operator is typing: the visitor's poll shows it for about 6 seconds; from the dashboard (`userId`) the rest
     * of the team sees who (lib/inbox/assignment.ts).
     */
    async operatorTyping(botId: string, sessionId: string, userId?: string): Promise<void> {
      const conversation = await conversationOf(botId, sessionId);
      await deps.db.query(
        `UPDATE conversations SET operator_typing_until = now() + make_interval(secs => $2::double precision / 1000),
                operator_typing_by = $3
          WHERE session_id = $1`,
        [conversation.session_id, LIMITS.operatorTypingMs, userId ?? null],
      );
    },

    /** Closes the request: the bot answers again and `resolved` is sent; a conversation not handed over is unchanged. */
    async resolve(botId: string, sessionId: string): Promise<ResolveResult> {
      const conversation = await conversationOf(botId, sessionId);
      return updateConversation(deps, conversation, resolveUpdate, [{ at: Date.now() }]);
    },
  };
  return service;
}

export type ConversationService = ReturnType<typeof createConversationService>;
