import type { FailureInfo } from '../failures';

/**
 * A run: one wake-up of an agent (a chat turn, a trigger), its steps with the model and tools.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export type TriggerKind = 'message' | 'webhook' | 'schedule' | 'poll' | 'manual';

export interface AgentRunInput {
  /** Chosen by the caller (API), or by the workflow for runs a Temporal Schedule starts. */
  runId: string;
  botId: string;
  workspaceId: string;
  triggerKind: TriggerKind;
  triggerId?: string;
  /** The run's input text (a visitor message, or a trigger's task text plus the signal body). */
  input: string;
  sessionId?: string;
  /** The visitor message this run answers, for message triggers. */
  messageId?: string;
  user?: string;
  role?: 'admin' | 'visitor';
  pageContext?: string;
  streamTurnId?: string;
  turnTimeoutMs: number;
  /** Offer the bot's actions (and, with `ownerContext`, its state) to the model as tools. */
  withTools?: boolean;
  /**
   * The run acts for the owner (schedules, polls, manual starts, acknowledged hooks): admin-only actions and the
   * agent state are available. Not for visitors, and not for a webhook in wait mode, whose caller reads the answer
   * (contract: the agent then sees none of the owner's private data).
   */
  ownerContext?: boolean;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  kind: 'action' | 'state_read' | 'state_write';
  actionId?: string;
  requiresApproval: boolean;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A knowledge source an answer used (docs/decisions/058-answers-cite-sources.md), in the wire shape of the
 * chat response, the stream's end frame and transcripts: stored and carried as is.
 */
export interface AnswerSource {
  /** The number the answer cites it by, as `[ref]` (the prompt numbers the sources it gives the model). */
  ref: number;
  source_id: string;
  title: string;
  /** The page's address, for a source a site scan read. */
  url?: string;
  /** The page of the source's best passage given, for a paged file (a PDF). */
  page?: number;
  /** The headings that passage sits under, joined by ` › `. */
  heading?: string;
}

/** With handoff on, what an agent does when it cannot answer from its knowledge (the owner's setting). */
export type WhenUnanswered = 'offer' | 'hand_over';

/**
 * An answer the agent could not give from its knowledge (docs/decisions/059-agent-knows-its-limits.md): it
 * offered a person, handed the conversation over, or (handoff off) only said so.
 */
export type Unanswered = 'offer' | 'hand_over' | 'said';

/** What one model call produced (or the extractive answer without a model). */
export interface GeneratedAnswer {
  text: string;
  /** The knowledge sources the text drew on; absent when it drew on none. */
  sources?: AnswerSource[];
  /** Set when the agent could not answer from its knowledge, and what it did about it. */
  unanswered?: Unanswered;
  model: string;
  promptTokens: number;
  completionTokens: number;
  toolCalls?: ToolCall[];
}

/** A chat turn's activity outcome: the answer, or the backend failure the visitor's client is told about. */
export interface MessageTurnOutcome {
  answer?: string;
  sources?: AnswerSource[];
  unanswered?: Unanswered;
  failure?: FailureInfo;
}

/** The tool part of a run's conversation with the model, carried by the workflow between LLM steps. */
export type ToolTurn =
  { role: 'assistant'; text: string; toolCalls: ToolCall[] } | { role: 'tool'; toolCallId: string; content: string };

export interface AgentRunResult {
  runId: string;
  answer: string;
  sources?: AnswerSource[];
  unanswered?: Unanswered;
  /** Set when the run did not happen (trigger deleted or off, poll content unchanged). */
  skipped?: string;
}

export function runWorkflowId(runId: string): string {
  return `run/${runId}`;
}

export function agentRunSearchAttributes(input: { botId: string; workspaceId: string; triggerKind: string }) {
  return {
    BotId: [input.botId],
    WorkspaceId: [input.workspaceId],
    TriggerKind: [input.triggerKind],
    RunStatus: ['running'],
  };
}
