import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FailureInfo } from '../failures';
import type { AnswerSource } from './agent-run';

/**
 * The conversation workflow: one visitor session, its status and turns (docs/architecture.md, Workflows).
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export type ConversationStatus = 'bot' | 'waiting' | 'operator';

export interface ConversationInput {
  botId: string;
  workspaceId: string;
  sessionId: string;
  /** Lifecycle thresholds; absent in production (the workflow's defaults). Workflow tests shorten them. */
  lifecycle?: { updatesBeforeContinueAsNew?: number; idleEndMs?: number };
}

export type HandoffEvent = 'escalated' | 'visitor_message' | 'resolved';

/**
 * Why a conversation was handed to a person: the visitor or the integrator asked (`requested`), the agent could not
 * answer (`unanswered`), or a person took it over (`operator`). Sent as `reason` with `escalated`.
 */
export type EscalationReason = 'requested' | 'unanswered' | 'operator';

/**
 * A handoff outside the agent's business hours (lib/bots/hours.ts): when the team is back (Unix ms; null when no
 * window ever opens) and the visitor's words for it, which ask for a contact. Decided by the API when the turn is sent.
 */
export interface AfterHours {
  backAt: number | null;
  text: string;
}

/** An image a message holds (`messages.attachment`); its address is `/media/{id}`. */
export interface MessageAttachment {
  id: string;
  content_type: string;
  size: number;
  width?: number;
  height?: number;
}

export interface TranscriptMessage {
  id: string;
  author: 'visitor' | 'bot' | 'operator';
  text: string;
  at: number;
  attachment?: MessageAttachment;
  /** An operator's reply from the dashboard: the person's name, shown to the visitor. */
  authorName?: string;
}

/** One change of a conversation's read model in Postgres (the conversation workflow's only writes). */
export interface TransitionInput {
  botId: string;
  sessionId: string;
  status?: ConversationStatus;
  escalated?: boolean;
  /** Why, when `escalated`. */
  escalationReason?: EscalationReason;
  /** When `escalated` outside business hours: when the team is back. */
  afterHours?: { backAt: number | null };
  resolved?: boolean;
  user?: string;
  /** `user` was named by a valid visitor confirmation (`user_auth`), not only typed as `user_token`. */
  userConfirmed?: boolean;
  messages: TranscriptMessage[];
  /** An outgoing webhook to record; delivered by a webhookDelivery workflow when the bot has an address. */
  event?: {
    deliveryId: string;
    kind: HandoffEvent;
    text?: string;
    /** A `visitor_message` that is an image: the image with its address (its `text` is the caption, empty). */
    attachment?: MessageAttachment & { url: string };
    at: number;
  };
  /** The chat turn this transition ends, and its outcome: announced when the transition commits (lib/streams). */
  announce?: { turnId: string; result: TurnResult };
}

export interface VisitorMessageInput {
  messageId: string;
  /** Id of the run that answers it, chosen by the API so a retried request maps to the same run. */
  runId: string;
  text: string;
  at: number;
  user?: string;
  /** `user` was named by a valid visitor confirmation (`user_auth`), not only typed as `user_token`. */
  userConfirmed?: boolean;
  role?: 'admin' | 'visitor';
  pageContext?: string;
  /** `escalate: true`, or the visitor asked for a person in plain text. */
  wantsHuman: boolean;
  /** The bot has actions this visitor may use: the turn runs as a child agentRun with tools. */
  withTools?: boolean;
  handoffEnabled: boolean;
  /** Outside the agent's business hours: what a handoff in this turn tells the visitor. */
  afterHours?: AfterHours;
  /** Set for `/chat/stream`: fragments are published under this id. */
  streamTurnId?: string;
  turnTimeoutMs: number;
}

/** A visitor attached an image (the widget): a message of the conversation, not a question the bot answers. */
export interface VisitorAttachmentInput {
  messageId: string;
  attachment: MessageAttachment;
  /** Its address, for the `visitor_message` webhook when a person handles the conversation. */
  url: string;
  at: number;
  user?: string;
}

export interface VisitorAttachmentResult {
  status: ConversationStatus;
}

export interface TurnResult {
  answer: string;
  /** The knowledge sources the answer used (absent when none). */
  sources?: AnswerSource[];
  handoff?: true;
  /** The agent could not answer and offers a person (the client may show a button that asks for one). */
  handoffOffered?: true;
  /** Handed over outside business hours: when the team is back (the answer says so and asks for a contact). */
  afterHours?: { backAt: number | null };
  /** Set when the bot could not answer; the API maps its type to the contract's 503 or to a stream error frame. */
  error?: FailureInfo;
  runId?: string;
}

/** A hand-over asked for (`POST /v1/api/handoff`), with the bot's settings when it was sent. */
export interface HandoffInput {
  handoffEnabled: boolean;
  at: number;
  /** Outside the agent's business hours: what the hand-over tells the visitor. */
  afterHours?: AfterHours;
  messageId?: string;
}

export interface HandoffResult {
  status: ConversationStatus;
  /** Handed over outside business hours: when the team is back. */
  afterHours?: { backAt: number | null };
}

export interface OperatorReplyInput {
  messageId: string;
  text: string;
  at: number;
  /** The replying person's name (dashboard replies; the operator API names nobody). */
  authorName?: string;
  /** An image the operator sent (the dashboard's inbox); `text` is then empty. */
  attachment?: MessageAttachment;
}

export interface OperatorReplyResult {
  id: string;
  at: number;
  status: ConversationStatus;
}

export interface ResolveResult {
  status: ConversationStatus;
  /** False when there was no open request to close. */
  resolved: boolean;
}

export const visitorMessageUpdate = defineUpdate<TurnResult, [VisitorMessageInput]>('visitorMessage');

export const visitorAttachmentUpdate = defineUpdate<VisitorAttachmentResult, [VisitorAttachmentInput]>(
  'visitorAttachment',
);

export const handoffUpdate = defineUpdate<HandoffResult, [HandoffInput]>('handoff');

export const operatorReplyUpdate = defineUpdate<OperatorReplyResult, [OperatorReplyInput]>('operatorReply');

export const resolveUpdate = defineUpdate<ResolveResult, [{ at: number }]>('resolve');

export const operatorJoinedSignal = defineSignal<[{ at: number }]>('operatorJoined');

export const statusQuery = defineQuery<ConversationStatus>('status');

export function conversationWorkflowId(botId: string, sessionId: string): string {
  return `conversation/${botId}/${sessionId}`;
}

export function conversationSearchAttributes(input: ConversationInput) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId], TriggerKind: ['message'] };
}
