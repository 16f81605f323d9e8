import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { createHash, randomUUID } from 'node:crypto';
import { conversationWorkflow } from '../../workflows/conversation';
import {
  type AfterHours,
  type ConversationInput,
  type ConversationStatus,
  type TurnResult,
  type VisitorMessageInput,
  conversationSearchAttributes,
  conversationWorkflowId,
  visitorMessageUpdate,
} from '../../workflows/contracts/conversation';
import { type Db, preparedStatement } from '../db';
import { ApiError, isUnavailableError } from '../errors';
import { verifyVisitorConfirmation } from '../identity';
import { newId } from '../ids';
import type { SecretBox } from '../secret-box';
import { type DeltaHub, type DeltaMessage, isAnswer } from '../streams';
import {
  type Temporal,
  isWorkflowClosing,
  isWorkflowTaskFailing,
  resendUnprocessedUpdate,
  waitThroughOutage,
  temporalConnected,
} from '../temporal';
import { MONTHLY_QUOTA_SQL, conversationsThisMonthSql } from '../billing/service';
import { asksForHuman } from './escalation';
import { type BusinessHours, awayNow } from '../bots/hours';

/**
 * The mechanics of a chat turn, for the conversation service (lib/conversations/service.ts): session binding and
 * quota, the Update-with-Start that runs the turn in the conversation workflow, and the subscription that hears the
 * committed answer first.
 */
export interface ConversationDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  turnTimeoutMs: number;
  /** Where committed answers are announced; the update result is the fallback when it is unreachable. */
  deltaHub?: DeltaHub;
}

export interface BotRow {
  id: string;
  workspace_id: string;
  handoff_enabled: boolean;
  identity_secret_sealed: string;
  business_hours: BusinessHours | null;
}

export interface ConversationRow {
  session_id: string;
  bot_id: string;
  workspace_id: string;
  status: ConversationStatus;
  /** This request created the conversation: its workflow cannot be running yet. */
  created?: boolean;
}

/** The placeholder answer when the monthly conversation quota is used up (spec: 200, not an error). */
export const QUOTA_PLACEHOLDER =
  'This chat is not available right now. Please try again later or use another way to contact us.';

/** The answer of every surface when the monthly conversation quota is used up: the placeholder, flagged. */
export function quotaExceededReply(sessionId: string) {
  return { answer: QUOTA_PLACEHOLDER, session_id: sessionId, quota_exceeded: true as const, notice: 'outage' as const };
}

export async function loadBot(db: Db, botId: string): Promise<BotRow> {
  const res = await db.query<BotRow>(
    `SELECT id, workspace_id, handoff_enabled, identity_secret_sealed, business_hours FROM bots WHERE id = $1`,
    [botId],
  );
  if (!res.rows[0]) throw new ApiError('invalid_key', 'The bot of this key no longer exists');
  return res.rows[0];
}

/** The conversation of this bot, or null; another bot's session is reported as not found (spec: bound at first use). */
export async function findConversation(db: Db, botId: string, sessionId: string): Promise<ConversationRow | null> {
  const res = await db.query<ConversationRow>(
    `SELECT session_id, bot_id, workspace_id, status FROM conversations WHERE session_id = $1`,
    [sessionId],
  );
  const row = res.rows[0];
  if (!row) return null;
  if (row.bot_id !== botId) throw new ApiError('not_found', 'No conversation with this session_id');
  return row;
}

/**
 * Starts a conversation for this bot, unless the workspace's monthly quota (with this month's top-ups) is used up
 * (then null). The count (the month's tally and the conversations since, lib/billing/service.ts) and the insert are
 * one statement; two simultaneous first messages may together pass the quota by one, which we accept rather than
 * serialize every new conversation of a workspace.
 */
export async function startConversation(
  db: Db,
  bot: BotRow,
  sessionId: string,
  opts: { checkQuota: boolean },
): Promise<ConversationRow | null> {
  const inserted = await db.query(
    `INSERT INTO conversations (session_id, bot_id, workspace_id)
     SELECT $1, $2, $3
      WHERE NOT $4 OR ${conversationsThisMonthSql('$3')} < (SELECT ${MONTHLY_QUOTA_SQL} FROM workspaces w WHERE w.id = $3)
     ON CONFLICT (session_id) DO NOTHING RETURNING 1`,
    [sessionId, bot.id, bot.workspace_id, opts.checkQuota],
  );
  if (inserted.rowCount)
    return { session_id: sessionId, bot_id: bot.id, workspace_id: bot.workspace_id, status: 'bot', created: true };
  return findConversation(db, bot.id, sessionId); // created meanwhile (ours, or 404), or null: quota used up
}

/**
 * Sends an update to the conversation's workflow, starting the workflow when it is not running (Update-with-Start),
 * and sends it again when the server dropped it unseen: the one way every conversation operation reaches its
 * workflow. `updateId` makes a retried request the same update, which Temporal applies once.
 *
 * A conversation that already existed is most likely running: it gets a plain update, and Update-with-Start only if
 * its workflow is not there (it ended idle, or never started). Update-with-Start makes the server try a start every
 * time, which cost a fifth more of its CPU per update (docs/decisions/119-streamed-turn-cpu.md).
 */
export function updateConversation<Ret, Args extends [unknown, ...unknown[]]>(
  deps: Pick<ConversationDeps, 'temporal'>,
  conversation: ConversationRow,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  updateId?: string,
): Promise<Ret> {
  const options = { args, ...(updateId ? { updateId } : {}) };
  const workflow = deps.temporal.client.workflow;
  return resendUnprocessedUpdate(async () => {
    if (!conversation.created) {
      try {
        return await workflow
          .getHandle(conversationWorkflowId(conversation.bot_id, conversation.session_id))
          .executeUpdate(update, options);
      } catch (err) {
        // Not running, or its run is closing (continuing as new): nothing of the update was applied, so the same
        // update id goes with a start below, which reaches the run that follows or starts one.
        if (!(err instanceof WorkflowNotFoundError) && !isWorkflowClosing(err)) throw err;
      }
    }
    return workflow.executeUpdateWithStart(update, {
      ...options,
      startWorkflowOperation: startOperation(deps, conversation),
    });
  });
}

export function startOperation(deps: Pick<ConversationDeps, 'temporal'>, conv: ConversationRow) {
  const input: ConversationInput = { botId: conv.bot_id, workspaceId: conv.workspace_id, sessionId: conv.session_id };
  return new WithStartWorkflowOperation(conversationWorkflow, {
    workflowId: conversationWorkflowId(conv.bot_id, conv.session_id),
    taskQueue: deps.temporal.taskQueue,
    // The first message creates the workflow; later ones reach the running one. A conversation whose workflow
    // ended (idle) starts again from the status Postgres recorded.
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input, { status: conv.status }],
    searchAttributes: conversationSearchAttributes(input),
  });
}

/** A visitor message as every surface passes it (the fields of the spec's ChatRequest). */
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

/** Everything before the turn itself: session binding, quota, visitor identity, escalation intent. */
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

export async function prepareChat(
  deps: ConversationDeps,
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

/** What a handoff now tells the visitor when the team is away (lib/bots/hours.ts); undefined within hours. */
export function handoffAfterHours(bot: Pick<BotRow, 'business_hours'>): AfterHours | undefined {
  return awayNow(bot.business_hours, Date.now()) ?? undefined;
}

/** Thrown when the turn took longer than the API waits; the turn itself goes on and its answer is kept. */
export class TurnTimeoutError extends Error {}

export async function runTurn(
  deps: ConversationDeps,
  prepared: Extract<PreparedChat, { kind: 'turn' }>,
  streamTurnId?: string,
): Promise<TurnResult> {
  const update = { ...prepared.update, ...(streamTurnId ? { streamTurnId } : {}) };
  // The model has the whole turn budget; the extra seconds cover the hops around it.
  const waitMs = deps.turnTimeoutMs + 5_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      sendTurn(deps, prepared.conversation, update, Date.now() + waitMs),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TurnTimeoutError('turn timed out')), waitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The turn never reached a worker, so nothing of it is stored — not even the visitor's message (the worker writes it).
 * A retry sends it afresh. Why (the cause):
 * - Temporal was out of reach: still a dependency's unavailability for the error handler (`isUnavailableError` reads
 *   the cause), 503 `service_unavailable`;
 * - `busy`: the server kept refusing the update because the conversation's workflow task keeps failing (a worker
 *   short of CPU, or a bug): the turn's `llm_overloaded` (lib/conversations/service.ts).
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
 * How long a turn that Temporal lost before any worker took it up is sent again, from the moment the send failed:
 * a server that stopped while the turn was on its way (sent while the connection was up) and is back within this
 * answers it; a longer outage answers 503, so a turn sent while Temporal is away is answered within ~5 s — the
 * first send's own retries (~2 s, lib/temporal.ts) and this (docs/decisions/temporal-outage-bounded-wait.md).
 */
const TEMPORAL_OUTAGE_RESEND_MS = 2_000;

/**
 * Sends the turn (Update-with-Start) and waits for its result. When Temporal becomes unreachable (docs/decisions/024-temporal-outage.md):
 * - a turn that has begun (its run is recorded) goes on in the worker: its result is waited for until `deadline` —
 *   the answer announced through Postgres usually comes first;
 * - a turn sent while the connection was up, which has not begun, may have reached a server that then stopped: an
 *   update no worker has accepted lives in the server's memory only, and went with it. It is sent again (the same
 *   update id: Temporal applies it once) every second for 2 s, each send bounded by that deadline; still out of
 *   reach then, the turn fails as one that was never sent (docs/decisions/temporal-outage-bounded-wait.md);
 * - a turn sent when the connection was already down fails at once, as the 503 the spec says may be retried: a new
 *   request during an outage is refused in seconds, it does not hang.
 */
async function sendTurn(
  deps: ConversationDeps,
  conversation: ConversationRow,
  update: VisitorMessageInput,
  deadline: number,
): Promise<TurnResult> {
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
    const until = Math.min(deadline, Date.now() + TEMPORAL_OUTAGE_RESEND_MS);
    try {
      await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, until - Date.now()))));
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

/** A subscription to one turn's messages: its fragments (streams) and the announcement of its committed answer. */
export interface TurnSubscription {
  /** Resolves with the bot's answer once it is in the transcript; never, if it is not announced. */
  announced: Promise<TurnResult>;
  /**
   * The answer's announcement has arrived. Notifications arrive in commit order, so every fragment published before
   * the answer was stored has arrived too: what the stream has not shown of the answer will not come as fragments.
   */
  readonly answered: boolean;
  close(): void;
}

/** Subscribes to the turn (before the update is sent, so nothing is missed); null when the listener is down. */
export async function subscribeTurn(
  deps: Pick<ConversationDeps, 'deltaHub'>,
  turnId: string,
  onFragment?: (msg: DeltaMessage) => void,
): Promise<TurnSubscription | null> {
  const hub = deps.deltaHub;
  if (!hub) return null;
  const listening = await hub.ready().then(
    () => true,
    () => false,
  );
  if (!listening) return null;
  let close = () => {};
  let answered = false;
  const announced = new Promise<TurnResult>((resolve) => {
    close = hub.subscribe(turnId, (msg) => {
      if (isAnswer(msg)) {
        answered = true;
        resolve({
          answer: msg.a,
          runId: turnId,
          ...(msg.s ? { sources: msg.s } : {}),
          ...(msg.o ? { handoffOffered: true as const } : {}),
        });
      } else onFragment?.(msg);
    });
  });
  return {
    announced,
    get answered() {
      return answered;
    },
    close: () => close(),
  };
}

/**
 * The turn's outcome as soon as it is known: the bot's answer is announced when it is committed to the transcript,
 * which is before the workflow has reported the update back through Temporal. Every other outcome (a person
 * handles the conversation, a failure, an answer too long to announce) comes from the update result. The workflow
 * goes on either way; the next turn waits for it (the workflow serializes turns).
 */
export async function firstOutcome(
  turn: Promise<TurnResult>,
  subscription: TurnSubscription | null,
): Promise<TurnResult> {
  if (!subscription) return turn;
  turn.catch(() => undefined); // when the announcement wins, nobody waits for the update any more
  return Promise.race([turn, subscription.announced]);
}

/** The error type a workflow update handler failed with, if it failed with an ApplicationFailure. */
export function updateFailureType(err: unknown): string | undefined {
  if (err instanceof WorkflowUpdateFailedError) return (err.cause as { type?: string } | undefined)?.type;
  return undefined;
}
