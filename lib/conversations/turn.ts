import { createHash, randomUUID } from 'node:crypto';
import {
  type ConversationStatus,
  type TurnResult,
  type VisitorMessageInput,
  conversationWorkflowId,
  visitorMessageUpdate,
} from '../../workflows/contracts/conversation';
import type { FailureInfo } from '../../workflows/failures';
import { type Db, type Queryable, preparedStatement } from '../db';
import { ApiError, SERVICE_RETRY_AFTER_SECONDS, isUnavailableError } from '../errors';
import { verifyVisitorConfirmation } from '../identity';
import { newId } from '../ids';
import { answerMessageId } from '../runs/bookkeeping';
import { announcedOutcome } from '../announcements';
import type { DeltaMessage } from '../streams/channel';
import { isWorkflowTaskFailing, temporalConnected, waitThroughOutage } from '../temporal';
import type { ConversationDeps } from './deps';
import { asksForHuman } from './escalation';
import {
  type BotRow,
  type ConversationRow,
  handoffAfterHours,
  startConversation,
  updateConversation,
} from './sessions';

/*
 * A chat turn, top-down (chat.ts and stream.ts walk it in this order):
 * 1. `prepareChat`: the bot and the session (started under the monthly quota), who the visitor is, escalation intent;
 * 2. `subscribeTurn`: this process listens for the turn's fragments and outcome, before anything is sent;
 * 3. `runTurn`: sends the `visitorMessage` update and waits for the outcome the worker announces when it records it
 *    (docs/decisions/154-one-way-for-the-answer.md); a failure comes back as a value that says what it means.
 * The callers shape the outcome for their surface (a JSON reply, stream frames).
 */

/** A visitor message as every surface passes it (the fields of the contract's ChatRequest). */
export interface ChatInput {
  session_id?: string;
  message: string;
  user_token?: string;
  user_auth?: string;
  page_context?: string;
  escalate?: boolean;
}

export type PreparedChat =
  | { kind: 'quota_exceeded'; sessionId: string }
  | { kind: 'turn'; sessionId: string; conversation: ConversationRow; update: VisitorMessageInput };

export type PreparedTurn = Extract<PreparedChat, { kind: 'turn' }>;

/** The bot, the session (if it exists) and whether the bot has actions, by who may use them. */
const PREPARE_CHAT = preparedStatement(
  'prepare-chat',
  `SELECT b.id, b.workspace_id, b.handoff_enabled, b.identity_secret_sealed, b.business_hours,
          c.bot_id AS c_bot, c.status AS c_status,
          EXISTS (SELECT 1 FROM bot_actions a WHERE a.bot_id = b.id AND NOT a.admin_only) AS visitor_tools,
          EXISTS (SELECT 1 FROM bot_actions a WHERE a.bot_id = b.id) AS admin_tools
     FROM bots b LEFT JOIN conversations c ON c.session_id = $2
    WHERE b.id = $1`,
);

/**
 * The ids of one turn: random, or derived from the request's idempotency scope, so that a retry of the same request
 * (even after the API gave up waiting, even after an idempotency takeover) is the same Temporal update — which
 * Temporal runs once — with the same message and run rows.
 */
export function turnIds(turnScope?: string): { messageId: string; runId: string; sessionId: string } {
  if (!turnScope) return { messageId: newId('msg'), runId: newId('run'), sessionId: randomUUID() };
  const h = createHash('sha256').update(`turn\n${turnScope}`).digest('hex');
  const uuid = `${h.slice(40, 48)}-${h.slice(48, 52)}-4${h.slice(53, 56)}-a${h.slice(57, 60)}-${h.slice(20, 32)}`;
  return { messageId: `msg_${h.slice(0, 20)}`, runId: `run_${h.slice(20, 40)}`, sessionId: uuid };
}

/** Everything before the turn itself: session binding, quota, visitor identity, escalation intent. */
export async function prepareChat(
  deps: Pick<ConversationDeps, 'db' | 'secrets' | 'turnTimeoutMs'>,
  botId: string,
  body: ChatInput,
  turnScope?: string,
): Promise<PreparedChat> {
  const ids = turnIds(turnScope);
  const sessionId = body.session_id ?? ids.sessionId;
  // One round trip for the bot, the session (if it exists) and whether the bot has actions, by who may use them.
  const res = await deps.db.query<
    BotRow & { c_bot: string | null; c_status: ConversationStatus | null; visitor_tools: boolean; admin_tools: boolean }
  >(PREPARE_CHAT([botId, sessionId]));
  const row = res.rows[0];
  if (!row) throw new ApiError('invalid_key', 'The bot of this key no longer exists');
  const bot: BotRow = {
    id: row.id,
    workspace_id: row.workspace_id,
    handoff_enabled: row.handoff_enabled,
    identity_secret_sealed: row.identity_secret_sealed,
    business_hours: row.business_hours,
  };
  if (row.c_bot && row.c_bot !== bot.id) throw new ApiError('not_found', 'No conversation with this session_id');
  const conversation: ConversationRow | null = row.c_bot
    ? { session_id: sessionId, bot_id: bot.id, workspace_id: bot.workspace_id, status: row.c_status! }
    : await startConversation(deps.db, bot, sessionId, { checkQuota: true });
  if (!conversation) return { kind: 'quota_exceeded', sessionId };
  // Spec, Visitor identity rule 4: the user of a valid confirmation wins over user_token. The bot's secret is
  // unsealed only for a turn that brings one (most do not).
  const confirmed = body.user_auth
    ? verifyVisitorConfirmation(body.user_auth, {
        botId: bot.id,
        secret: deps.secrets.open(bot.identity_secret_sealed),
      })
    : null;
  const role = confirmed?.role ?? 'visitor';
  // Outside business hours, a handoff in this turn (asked for, or the agent cannot answer) says when the team is back.
  const afterHours = bot.handoff_enabled ? handoffAfterHours(bot) : undefined;
  return {
    kind: 'turn',
    sessionId,
    conversation,
    update: {
      messageId: ids.messageId,
      runId: ids.runId,
      text: body.message,
      at: Date.now(),
      user: confirmed?.user ?? body.user_token,
      ...(confirmed ? { userConfirmed: true } : {}),
      role,
      withTools: role === 'admin' ? row.admin_tools : row.visitor_tools,
      pageContext: body.page_context,
      wantsHuman: body.escalate === true || asksForHuman(body.message),
      handoffEnabled: bot.handoff_enabled,
      ...(afterHours ? { afterHours } : {}),
      turnTimeoutMs: deps.turnTimeoutMs,
    },
  };
}

/**
 * What a turn's failure means. `stillRunning`: the turn goes on — its answer, if it gets one, lands in the
 * transcript, and a retry with the same Idempotency-Key joins it. `notSent`: no worker ever saw it — nothing of it is
 * stored, not even the visitor's message, and a retry sends it afresh.
 */
export type TurnFailure =
  /** The turn ended without an answer (the model, the credits, the turn itself): the worker recorded why. */
  | { kind: 'failed'; failure: FailureInfo; stillRunning: false; notSent: false }
  /** The API stopped waiting (the turn's budget and 5 s, docs/decisions/013-turn-timeout.md). */
  | { kind: 'timed_out'; stillRunning: true; notSent: false }
  /** Temporal kept refusing the update: the conversation's workflow task keeps failing (026-workflow-task-failing). */
  | { kind: 'busy'; stillRunning: false; notSent: true }
  /** Temporal or Postgres out of reach (024-temporal-outage): before the turn reached a worker, or after it may have */
  | ({ kind: 'unreachable'; cause: unknown } & (
      { stillRunning: false; notSent: true } | { stillRunning: true; notSent: false }
    ));

/** How a turn ended; anything unexpected (a bug) is thrown instead. */
export type TurnOutcome = { ok: true; result: TurnResult } | { ok: false; failure: TurnFailure };

/** Seconds a client should wait after a turn the API stopped waiting for. */
const TURN_TIMEOUT_RETRY_AFTER = 10;

/**
 * The failure the visitor is told (contract: the `llm_*` codes). A turn the API stopped waiting for, or could not send, is
 * `llm_overloaded`: the code that says retry, and when.
 */
export function visitorFailure(failure: TurnFailure): FailureInfo {
  switch (failure.kind) {
    case 'failed':
      return failure.failure;
    case 'timed_out':
      return {
        type: 'llm_overloaded',
        message: 'The turn did not finish in time',
        retryAfter: TURN_TIMEOUT_RETRY_AFTER,
      };
    case 'busy':
      return { type: 'llm_overloaded', message: 'The conversation is busy', retryAfter: SERVICE_RETRY_AFTER_SECONDS };
    case 'unreachable':
      return {
        type: 'llm_overloaded',
        message: 'A dependency is unavailable',
        retryAfter: SERVICE_RETRY_AFTER_SECONDS,
      };
  }
}

/** A subscription to one turn's messages: its fragments (streams) and the announcement of its outcome. */
export interface TurnSubscription {
  /** Resolves with the turn's outcome once it is recorded; never, if no announcement reaches this process. */
  readonly announced: Promise<TurnResult>;
  /**
   * Waits until every notification committed so far has reached this process — a round trip on the listener's
   * connection (`DeltaHub.sync`), at most `drainMs` — and resolves with the outcome announced by then, else null:
   * no announcement and no fragment sent before is still on its way.
   */
  drain(): Promise<TurnResult | null>;
  close(): void;
}

/** How long a turn waits for the last of what the listener has on its way (the stream's last pieces). */
const DRAIN_MS = 1_000;

/** Subscribes to the turn (before the update is sent, so nothing is missed); null when the listener is down. */
export async function subscribeTurn(
  deps: Pick<ConversationDeps, 'db' | 'deltaHub'>,
  turnId: string,
  opts: { onFragment?: (msg: DeltaMessage) => void; drainMs?: number } = {},
): Promise<TurnSubscription | null> {
  const hub = deps.deltaHub;
  if (!hub) return null;
  const listening = await hub.ready().then(
    () => true,
    () => false,
  );
  if (!listening) return null;
  // The first announcement, decoded; a transition retried after its commit announces again, and is not listened to.
  let heard: Promise<TurnResult | null> | undefined;
  let announce: (result: TurnResult) => void = () => undefined;
  const announced = new Promise<TurnResult>((resolve) => (announce = resolve));
  const close = hub.subscribe(turnId, (msg) => {
    const said = announcedOutcome(msg);
    if (!said) {
      if ('d' in msg) opts.onFragment?.(msg);
    } else if (!heard) {
      heard = said.inTranscript ? answerFromTranscript(deps.db, said.result) : Promise.resolve(said.result);
      void heard.then((result) => result && announce(result));
    }
  });
  return {
    announced,
    async drain() {
      if (!heard) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          hub.sync().catch(() => undefined),
          new Promise((resolve) => (timer = setTimeout(resolve, opts.drainMs ?? DRAIN_MS))),
        ]);
        clearTimeout(timer);
      }
      return (await heard) ?? null;
    },
    close,
  };
}

/**
 * An outcome announced without its answer (too long for a notification): the answer read from the transcript — the
 * bot's message, and after a hand-over outside business hours the one saying when the team is back
 * (workflows/conversation.ts writes it as `{answer id}_away`). Null when it cannot be read: the update's result
 * stands in.
 */
async function answerFromTranscript(db: Queryable, result: TurnResult): Promise<TurnResult | null> {
  const id = answerMessageId(result.runId!);
  const res = await db
    .query<{ text: string | null }>(
      `SELECT string_agg(text, E'\\n\\n' ORDER BY seq) AS text FROM messages WHERE id = ANY($1::text[])`,
      [[id, `${id}_away`]],
    )
    .catch(() => null);
  const text = res?.rows[0]?.text;
  return typeof text === 'string' ? { ...result, answer: text } : null;
}

/**
 * Sends the turn and waits for its outcome — one way: the announcement the worker makes when it records the outcome
 * (the answer stored, the hand-over, the failure). The update's own result stands in only where no announcement can
 * reach this process: no listener, a listener that lost its connection during the turn, or a turn already over when
 * this request subscribed (a retry joining it). The update reporting back first tells which: the announcement,
 * committed before it, is then on the listener's connection already, and `drain` hands it over if it is there.
 * Expected failures come back as values (`TurnFailure`); anything else (a bug) is thrown.
 */
export async function runTurn(
  deps: Pick<ConversationDeps, 'db' | 'temporal' | 'turnTimeoutMs'>,
  prepared: PreparedTurn,
  subscription: TurnSubscription | null,
  opts: { streamed?: boolean } = {},
): Promise<TurnOutcome> {
  const update = { ...prepared.update, ...(opts.streamed ? { streamTurnId: prepared.update.runId } : {}) };
  // The model has the whole turn budget; the extra seconds cover the hops around it.
  const waitMs = deps.turnTimeoutMs + 5_000;
  const reported = sendTurn(deps, prepared.conversation, update, Date.now() + waitMs).then(
    async (result) => (await subscription?.drain()) ?? result,
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  try {
    const result = await Promise.race([reported, timedOut, ...(subscription ? [subscription.announced] : [])]);
    if (!result) return { ok: false, failure: { kind: 'timed_out', stillRunning: true, notSent: false } };
    if (result.error) {
      return { ok: false, failure: { kind: 'failed', failure: result.error, stillRunning: false, notSent: false } };
    }
    return { ok: true, result };
  } catch (err) {
    const failure = failureOf(err);
    if (!failure) throw err;
    return { ok: false, failure };
  } finally {
    clearTimeout(timer);
  }
}

/** What a thrown failure of sending a turn means, or null when it is unexpected (a bug). */
export function failureOf(err: unknown): TurnFailure | null {
  if (err instanceof TurnNotSentError) {
    return err.busy
      ? { kind: 'busy', stillRunning: false, notSent: true }
      : { kind: 'unreachable', cause: err, stillRunning: false, notSent: true };
  }
  // The turn may have begun: it goes on.
  if (isUnavailableError(err)) return { kind: 'unreachable', cause: err, stillRunning: true, notSent: false };
  return null;
}

/**
 * The turn never reached a worker, so nothing of it is stored — not even the visitor's message (the worker writes it).
 * A retry sends it afresh. Why (the cause): Temporal was out of reach (`isUnavailableError` reads the cause), or —
 * `busy` — the server kept refusing the update because the conversation's workflow task keeps failing.
 */
export class TurnNotSentError extends Error {
  readonly busy: boolean;
  constructor(cause: unknown) {
    const busy = isWorkflowTaskFailing(cause);
    super(
      busy
        ? "The turn could not be sent: the conversation's workflow task keeps failing"
        : 'The turn could not be sent: Temporal is out of reach',
      { cause },
    );
    this.name = 'TurnNotSentError';
    this.busy = busy;
  }
}

/**
 * How long, from its first send, a turn that Temporal lost before any worker took it up is sent again: a server
 * that stopped while the turn was on its way (sent while the connection was up) and is back within this answers it;
 * a longer outage answers 503. The first send's own retries (~2 s, lib/temporal.ts) count in it, so a turn sent while
 * Temporal is away is answered within ~4 s even on a busy machine (docs/decisions/149-temporal-outage-bounded-wait.md).
 */
const TEMPORAL_OUTAGE_RESEND_MS = 3_000;

/**
 * Sends the turn (Update-with-Start) and waits for the update's result. When Temporal becomes unreachable
 * (docs/decisions/024-temporal-outage.md):
 * - a turn that has begun (its run is recorded) goes on in the worker: its result is waited for until `deadline` —
 *   the outcome announced through Postgres comes first;
 * - a turn sent while the connection was up, which has not begun, may have reached a server that then stopped: an
 *   update no worker has accepted lives in the server's memory only, and went with it. It is sent again (the same
 *   update id: Temporal applies it once) every second until 3 s after the first send, each send bounded by that
 *   deadline; still out of reach then, the turn fails as one that was never sent (docs/decisions/149-temporal-outage-bounded-wait.md);
 * - a turn sent when the connection was already down fails at once, as the 503 the contract says may be retried: a new
 *   request during an outage is refused in seconds, it does not hang.
 */
async function sendTurn(
  deps: Pick<ConversationDeps, 'db' | 'temporal'>,
  conversation: ConversationRow,
  update: VisitorMessageInput,
  deadline: number,
): Promise<TurnResult> {
  const sentAt = Date.now();
  const sentConnected = temporalConnected(deps.temporal);
  const send = () => updateConversation(deps, conversation, visitorMessageUpdate, [update], update.messageId);
  const waitForBegun = () => {
    const handle = deps.temporal.client.workflow.getHandle(
      conversationWorkflowId(conversation.bot_id, conversation.session_id),
    );
    return waitThroughOutage(() => handle.getUpdateHandle<TurnResult>(update.messageId).result(), deadline);
  };
  try {
    return await send();
  } catch (err) {
    // Still refused after the resends of updateConversation: the worker never saw the turn.
    if (isWorkflowTaskFailing(err)) throw new TurnNotSentError(err);
    if (!isUnavailableError(err)) throw err;
    if (await turnBegan(deps.db, update.runId)) return await waitForBegun();
    if (!sentConnected) throw new TurnNotSentError(err);
    // Counted from the first send, whose own retries took part of it already.
    const until = Math.min(deadline, sentAt + TEMPORAL_OUTAGE_RESEND_MS);
    try {
      if (Date.now() + 100 >= until) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, until - Date.now() - 100))));
      // Each send within the deadline (its gRPC retries included); one that reached a worker in time has begun.
      return await waitThroughOutage(() => deps.temporal.connection.withDeadline(until, send), until);
    } catch (failed) {
      if (!isUnavailableError(failed)) throw failed;
      // A resend that reached a worker has begun: its answer is waited for; one that did not is not stored.
      const began = await turnBegan(deps.db, update.runId).catch(() => null);
      if (began) return await waitForBegun();
      if (began === false) throw new TurnNotSentError(failed);
      throw failed;
    }
  }
}

async function turnBegan(db: Db, runId: string): Promise<boolean> {
  const res = await db.query(`SELECT 1 FROM runs WHERE id = $1`, [runId]);
  return res.rowCount === 1;
}
