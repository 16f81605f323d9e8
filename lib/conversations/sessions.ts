import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { conversationWorkflow } from '../../workflows/conversation';
import {
  type AfterHours,
  type ConversationInput,
  type ConversationStatus,
  conversationSearchAttributes,
  conversationWorkflowId,
} from '../../workflows/contracts/conversation';
import { type Db } from '../db';
import { ApiError } from '../errors';
import { type Temporal, isWorkflowClosing, resendUnprocessedUpdate } from '../temporal';
import { MONTHLY_QUOTA_SQL, conversationsThisMonthSql } from '../billing/service';
import { type BusinessHours, awayNow } from '../bots/hours';

/**
 * A conversation's row and its workflow, as every operation reaches them: the bot, the session bound to it (started
 * under the monthly quota), and the one way an operation reaches the conversation's workflow (`updateConversation`).
 */
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

/** The placeholder answer when the monthly conversation quota is used up (contract: 200, not an error). */
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

/** The conversation of this bot, or null; another bot's session is reported as not found (contract: bound at first use). */
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

/** The conversation of this bot, or 404 `not_found` (also for another bot's session: contract, bound at first use). */
export async function conversationOf(db: Db, botId: string, sessionId: string): Promise<ConversationRow> {
  const conversation = await findConversation(db, botId, sessionId);
  if (!conversation) throw new ApiError('not_found', 'No conversation with this session_id');
  return conversation;
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

/** The conversation of this bot, started now if there is none yet (null: the monthly quota is used up). */
export const findOrStartConversation = async (db: Db, bot: BotRow, sessionId: string, opts: { checkQuota: boolean }) =>
  (await findConversation(db, bot.id, sessionId)) ?? (await startConversation(db, bot, sessionId, opts));

/** What a handoff now tells the visitor when the team is away (lib/bots/hours.ts); undefined within hours. */
export function handoffAfterHours(bot: Pick<BotRow, 'business_hours'>): AfterHours | undefined {
  return awayNow(bot.business_hours, Date.now()) ?? undefined;
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
  deps: { temporal: Temporal },
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
      startWorkflowOperation: startOperation(deps.temporal, conversation),
    });
  });
}

function startOperation(temporal: Temporal, conv: ConversationRow) {
  const input: ConversationInput = { botId: conv.bot_id, workspaceId: conv.workspace_id, sessionId: conv.session_id };
  return new WithStartWorkflowOperation(conversationWorkflow, {
    workflowId: conversationWorkflowId(conv.bot_id, conv.session_id),
    taskQueue: temporal.taskQueue,
    // The first message creates the workflow; later ones reach the running one. A conversation whose workflow
    // ended (idle) starts again from the status Postgres recorded.
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input, { status: conv.status }],
    searchAttributes: conversationSearchAttributes(input),
  });
}
