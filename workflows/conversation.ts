import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  patched,
  proxyLocalActivities,
  setHandler,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { AgentRunActivities } from '../activities/agent-run';
import type { ConversationActivities } from '../activities/conversation';
import { agentRunWorkflow } from './agent-run';
import { failure, failureInfo } from './failures';
import { type AnswerSource, type Unanswered, agentRunSearchAttributes, runWorkflowId } from './contracts/agent-run';
import {
  type AfterHours,
  type ConversationInput,
  type ConversationStatus,
  type HandoffInput,
  type HandoffResult,
  type OperatorReplyInput,
  type OperatorReplyResult,
  type ResolveResult,
  type TranscriptMessage,
  type TransitionInput,
  type TurnResult,
  type VisitorAttachmentInput,
  type VisitorAttachmentResult,
  type VisitorMessageInput,
  handoffUpdate,
  operatorJoinedSignal,
  operatorReplyUpdate,
  resolveUpdate,
  statusQuery,
  visitorAttachmentUpdate,
  visitorMessageUpdate,
} from './contracts/conversation';
import { deliveryWorkflowId } from './contracts/webhook-delivery';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/** What the visitor reads when the conversation is handed to a person (contract: "an escalation confirmation"). */
export const ESCALATION_CONFIRMATION =
  "I'm handing this conversation to a person from our team. They will reply here as soon as they can.";

// One transaction in Postgres per transition; local, so a turn costs no extra server round trip.
const { applyTransition } = proxyLocalActivities<ConversationActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 20 },
});

/**
 * What a turn's database writes may add to the model's budget: they retry through a Postgres outage of up to 30 s
 * (STORAGE_OUTAGE_RETRY_MS, at most 30 s) before the turn fails (docs/decisions/023-postgres-outage-during-turn.md).
 */
const STORAGE_GRACE_MS = 35_000;

/**
 * A bot answer is one local activity inside this workflow rather than a child workflow: measured on the dev server,
 * the child's extra hops cost more than the whole platform budget of a turn
 * (docs/decisions/005-chat-turn-local-activity.md). The run is still durable (a replacement worker re-runs the
 * activity, idempotently), recorded in `runs`, and visible here in the Temporal UI; trigger runs use the agentRun
 * workflow with the same steps.
 */
function turnActivities(turnTimeoutMs: number) {
  return proxyLocalActivities<AgentRunActivities>({
    // The model's budget plus the database work around it, through an outage; retries stay within it.
    startToCloseTimeout: turnTimeoutMs + STORAGE_GRACE_MS,
    scheduleToCloseTimeout: turnTimeoutMs + STORAGE_GRACE_MS,
    retry: { initialInterval: '200 milliseconds', maximumAttempts: 3 },
  });
}

const { finishRun: recordFailedRun } = proxyLocalActivities<AgentRunActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 20 },
});

/** Patch id: an operator's takeover of a bot-answered conversation sends `escalated` (added after release). */
const OPERATOR_TAKEOVER_ESCALATES = 'operator-takeover-escalates';

/** A workflow holds about 2 000 updates in its history (docs/architecture.md, Workflows); start afresh well before that. */
export const UPDATES_BEFORE_CONTINUE_AS_NEW = 500;
/** A conversation the bot answers, untouched for a whole window of this length, ends; its next message starts it again. */
export const IDLE_END_MS = 7 * 24 * 3600 * 1000;

/** A conversation run's state, which its update handlers read and change, one at a time (`serialized`). */
interface Conversation {
  readonly input: ConversationInput;
  status: ConversationStatus;
  /** The last answer offered a person (it could not answer): a hand-over asked for next is for that reason. */
  offeredPerson: boolean;
  /** Updates and signals this run has handled: continuing as new and the idle end count them. */
  handled: number;
}

/**
 * One conversation session (docs/architecture.md, Workflows): owns its status — bot → waiting → operator → bot — and runs
 * its turns one at a time. Each bot answer is a run (trigger kind `message`) executed here as a local activity.
 * Postgres is the read model (polling never touches Temporal); every status change is written by applyTransition.
 */
export async function conversationWorkflow(
  input: ConversationInput,
  carried?: { status: ConversationStatus },
): Promise<void> {
  const c: Conversation = { input, status: carried?.status ?? 'bot', offeredPerson: false, handled: 0 };
  const updatesBeforeContinueAsNew = input.lifecycle?.updatesBeforeContinueAsNew ?? UPDATES_BEFORE_CONTINUE_AS_NEW;
  const idleEndMs = input.lifecycle?.idleEndMs ?? IDLE_END_MS;

  // Turns run one after another (contract, and docs/architecture.md: the workflow serializes its turns).
  let tail: Promise<unknown> = Promise.resolve();
  function serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = tail.then(fn);
    tail = run.catch(() => undefined);
    c.handled++;
    return run;
  }

  setHandler(statusQuery, () => c.status);
  // Signal handlers never throw; an operator opening the thread only counts as activity.
  setHandler(operatorJoinedSignal, () => {
    c.handled++;
  });
  setHandler(visitorMessageUpdate, (msg) => serialized(() => visitorTurn(c, msg)));
  setHandler(visitorAttachmentUpdate, (msg) => serialized(() => visitorAttachment(c, msg)));
  setHandler(handoffUpdate, (req) => serialized(() => handoffAsked(c, req)));
  setHandler(operatorReplyUpdate, (reply) => serialized(() => operatorReplied(c, reply)));
  setHandler(resolveUpdate, (req) => serialized(() => requestResolved(c, req)));

  // Live until the history gets long (then continue as new) or a bot-answered conversation sits idle. The idle
  // timer is not restarted by every turn (that would add a timer cancel and start to each turn's history): it
  // runs its full length, and on waking the workflow checks whether anything happened meanwhile.
  for (;;) {
    const seen = c.handled;
    await condition(() => c.handled >= updatesBeforeContinueAsNew, idleEndMs);
    if (c.handled >= updatesBeforeContinueAsNew) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof conversationWorkflow>(input, { status: c.status });
    }
    if (c.handled === seen && c.status === 'bot') {
      await condition(allHandlersFinished);
      return;
    }
  }
}

/** Writes a transition to the read model, and starts the webhook delivery it recorded. */
async function transition(c: Conversation, t: Omit<TransitionInput, 'botId' | 'sessionId'>): Promise<void> {
  const { deliveryId, deliverySchedule } = await applyTransition({
    botId: c.input.botId,
    sessionId: c.input.sessionId,
    ...t,
  });
  if (deliveryId) {
    // The delivery outlives this conversation run (continue-as-new, idle end): it is abandoned, not owned.
    await startChild(webhookDeliveryWorkflow, {
      workflowId: deliveryWorkflowId(deliveryId),
      args: deliverySchedule ? [deliveryId, deliverySchedule] : [deliveryId],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      searchAttributes: { BotId: [c.input.botId] },
    });
  }
}

/** A handoff's `afterHours` field (when the team is back) for a transition or a result; none within hours. */
const backAtOf = (away: AfterHours | undefined) => (away ? { afterHours: { backAt: away.backAt } } : {});

/**
 * A visitor's message: forwarded while a person handles the conversation, a hand-over when the visitor asks for a
 * person, else the bot's answer. Every outcome is announced by the statement that records it (lib/announcements.ts):
 * the API waits for that.
 */
async function visitorTurn(c: Conversation, msg: VisitorMessageInput): Promise<TurnResult> {
  const visitorMessage = { id: msg.messageId, author: 'visitor' as const, text: msg.text, at: msg.at };
  const announce = (result: TurnResult) => ({ turnId: msg.runId, result });
  if (c.status !== 'bot') {
    // A person handles the conversation: the bot stays silent, the message is forwarded.
    const forwarded: TurnResult = { answer: '', handoff: true };
    await transition(c, {
      messages: [visitorMessage],
      user: msg.user,
      userConfirmed: msg.userConfirmed,
      event: { deliveryId: `dlv_${uuid4()}`, kind: 'visitor_message', text: msg.text, at: msg.at },
      announce: announce(forwarded),
    });
    return forwarded;
  }
  if (msg.wantsHuman && msg.handoffEnabled) {
    c.status = 'waiting';
    // Outside business hours the visitor is told when the team is back and asked for a contact instead.
    const words = msg.afterHours?.text ?? ESCALATION_CONFIRMATION;
    const escalated: TurnResult = { answer: words, handoff: true, ...backAtOf(msg.afterHours) };
    await transition(c, {
      status: 'waiting',
      escalated: true,
      escalationReason: c.offeredPerson ? 'unanswered' : 'requested',
      ...backAtOf(msg.afterHours),
      user: msg.user,
      userConfirmed: msg.userConfirmed,
      messages: [visitorMessage, { id: `msg_${msg.runId.slice(4)}`, author: 'bot', text: words, at: msg.at + 1 }],
      event: { deliveryId: `dlv_${uuid4()}`, kind: 'escalated', at: msg.at },
      announce: announce(escalated),
    });
    c.offeredPerson = false;
    return escalated;
  }
  return botAnswer(c, msg, visitorMessage);
}

/**
 * The bot answers a visitor's message: a run (trigger kind `message`), as one local activity — or, when the bot has
 * actions for this visitor, as a child agentRun, whose loop runs tool calls (and approvals).
 */
async function botAnswer(
  c: Conversation,
  msg: VisitorMessageInput,
  visitorMessage: TranscriptMessage,
): Promise<TurnResult> {
  const { input } = c;
  const run = {
    runId: msg.runId,
    botId: input.botId,
    workspaceId: input.workspaceId,
    triggerKind: 'message' as const,
    input: msg.text,
    sessionId: input.sessionId,
    messageId: msg.messageId,
    user: msg.user,
    role: msg.role,
    pageContext: msg.pageContext,
    streamTurnId: msg.streamTurnId,
    turnTimeoutMs: msg.turnTimeoutMs,
  };
  if (msg.withTools) {
    await transition(c, { messages: [visitorMessage], user: msg.user, userConfirmed: msg.userConfirmed });
    const runInput = { ...run, withTools: true, ownerContext: false };
    try {
      const result = await executeChild(agentRunWorkflow, {
        workflowId: runWorkflowId(msg.runId),
        args: [runInput],
        searchAttributes: agentRunSearchAttributes(runInput),
      });
      return await answered(c, msg, result);
    } catch (err) {
      // The API maps the failure's type to the contract's answer (lib/errors.ts, apiErrorForFailure); the child
      // announced it when it recorded the run's failure.
      return {
        answer: '',
        runId: msg.runId,
        error: failureInfo(err, { fallbackMessage: 'The answer could not be generated' }),
      };
    }
  }
  try {
    const outcome = await turnActivities(msg.turnTimeoutMs).answerMessage({
      visitor: {
        botId: input.botId,
        sessionId: input.sessionId,
        messages: [visitorMessage],
        user: msg.user,
        userConfirmed: msg.userConfirmed,
      },
      run,
    });
    if (outcome.failure) return { answer: '', runId: msg.runId, error: outcome.failure };
    return await answered(c, msg, { ...outcome, answer: outcome.answer ?? '' });
  } catch (err) {
    // Not the backend's fault (storage kept failing, a bug): the run is closed as failed, the visitor told so.
    const failed: TurnResult = {
      answer: '',
      runId: msg.runId,
      error: { type: 'internal_error', message: 'The answer could not be generated' },
    };
    await recordFailedRun({
      run,
      status: 'failed',
      errorCode: 'internal_error',
      error: failureInfo(err).message,
      turnOutcome: failed,
    });
    return failed;
  }
}

/**
 * The turn's result from the bot's answer. An answer the agent could not give (lib/runs/limits.ts) hands the
 * conversation over when the owner chose so — the answer already says a person will reply — or offers a person.
 */
async function answered(
  c: Conversation,
  msg: VisitorMessageInput,
  result: { answer: string; sources?: AnswerSource[]; unanswered?: Unanswered },
): Promise<TurnResult> {
  const runId = msg.runId;
  c.offeredPerson = result.unanswered === 'offer';
  if (result.unanswered === 'hand_over' && c.status === 'bot') {
    c.status = 'waiting';
    const away = msg.afterHours;
    const at = Date.now();
    const handedOver: TurnResult = {
      answer: away ? `${result.answer}\n\n${away.text}` : result.answer,
      runId,
      handoff: true,
      ...backAtOf(away),
    };
    await transition(c, {
      status: 'waiting',
      escalated: true,
      escalationReason: 'unanswered',
      ...backAtOf(away),
      // Outside business hours, when the team is back, in a message of its own after the answer.
      messages: away ? [{ id: `msg_${runId.slice(4)}_away`, author: 'bot', text: away.text, at }] : [],
      event: { deliveryId: `dlv_${uuid4()}`, kind: 'escalated', at },
      announce: { turnId: runId, result: handedOver },
    });
    return handedOver;
  }
  return {
    answer: result.answer,
    runId,
    ...(result.sources ? { sources: result.sources } : {}),
    ...(result.unanswered === 'offer' ? { handoffOffered: true as const } : {}),
  };
}

/**
 * An image is stored like a message and, while a person handles the conversation, forwarded like one; the bot does
 * not answer it (it reads text only).
 */
async function visitorAttachment(c: Conversation, msg: VisitorAttachmentInput): Promise<VisitorAttachmentResult> {
  await transition(c, {
    messages: [{ id: msg.messageId, author: 'visitor', text: '', at: msg.at, attachment: msg.attachment }],
    user: msg.user,
    ...(c.status !== 'bot'
      ? {
          event: {
            deliveryId: `dlv_${uuid4()}`,
            kind: 'visitor_message' as const,
            text: '',
            attachment: { ...msg.attachment, url: msg.url },
            at: msg.at,
          },
        }
      : {}),
  });
  return { status: c.status };
}

/** The visitor (or the integrator) asks for a person: the conversation goes to `waiting`, unless handoff is off. */
async function handoffAsked(c: Conversation, req: HandoffInput): Promise<HandoffResult> {
  if (c.status === 'bot') {
    if (!req.handoffEnabled) throw failure('handoff_disabled', 'Handoff is disabled for this bot');
    c.status = 'waiting';
    await transition(c, {
      status: 'waiting',
      escalated: true,
      escalationReason: c.offeredPerson ? 'unanswered' : 'requested',
      ...backAtOf(req.afterHours),
      // Outside business hours the visitor reads when the team is back, and is asked for a contact.
      messages: req.afterHours
        ? [{ id: req.messageId ?? `msg_${uuid4()}`, author: 'bot', text: req.afterHours.text, at: req.at }]
        : [],
      event: { deliveryId: `dlv_${uuid4()}`, kind: 'escalated', at: req.at },
    });
    c.offeredPerson = false;
    return { status: c.status, ...backAtOf(req.afterHours) };
  }
  return { status: c.status };
}

/**
 * Decision (docs/decisions/010-operator-reply-takes-over.md): `waiting` becomes `operator` when an operator first
 * replies. An operator who takes over a conversation the bot was answering hands it over too: every handed-over
 * conversation starts with `escalated`, so receivers never see `resolved` without one (histories from before this rule
 * replay without the event).
 */
async function operatorReplied(c: Conversation, reply: OperatorReplyInput): Promise<OperatorReplyResult> {
  const wasBot = c.status === 'bot';
  c.status = 'operator';
  const announce = wasBot && patched(OPERATOR_TAKEOVER_ESCALATES);
  await transition(c, {
    status: 'operator',
    escalated: wasBot,
    ...(wasBot ? { escalationReason: 'operator' as const } : {}),
    messages: [
      {
        id: reply.messageId,
        author: 'operator',
        text: reply.text,
        at: reply.at,
        ...(reply.authorName ? { authorName: reply.authorName } : {}),
        ...(reply.attachment ? { attachment: reply.attachment } : {}),
      },
    ],
    ...(announce ? { event: { deliveryId: `dlv_${uuid4()}`, kind: 'escalated' as const, at: reply.at } } : {}),
  });
  return { id: reply.messageId, at: reply.at, status: c.status };
}

/** Closes the request: the bot answers again and `resolved` is sent; a conversation not handed over is unchanged. */
async function requestResolved(c: Conversation, req: { at: number }): Promise<ResolveResult> {
  if (c.status === 'bot') return { status: c.status, resolved: false };
  c.status = 'bot';
  await transition(c, {
    status: 'bot',
    resolved: true,
    messages: [],
    event: { deliveryId: `dlv_${uuid4()}`, kind: 'resolved', at: req.at },
  });
  return { status: c.status, resolved: true };
}
