import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * A builder conversation (contract, Builder over MCP): who holds it, its turns, tool calls and consent.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

/** Who is talking to the builder: a program with a builder key, or a signed-in person in the dashboard. */
export type BuilderPrincipal =
  { kind: 'builder_key'; keyId: string; botId: string | null } | { kind: 'session'; userId: string };

/** Where a builder conversation is held: MCP (with or without a thread), the HTTP builder call, the dashboard. */
export type BuilderSurface = 'mcp' | 'http' | 'dashboard';

export interface BuilderThreadInput {
  workspaceId: string;
  /**
   * Whose conversation it is (`principalOwner`): the builder key (the program holding it) or the signed-in person.
   * Another principal never reaches it — not its memory, not what awaits consent, not its undelivered results.
   * Absent in conversations started before it existed.
   */
  owner?: string;
  surface: BuilderSurface;
  thread: string | null;
}

/** The owner of the conversations a principal holds: `key:<key id>` or `user:<user id>`. */
export function principalOwner(principal: BuilderPrincipal): string {
  return principal.kind === 'builder_key' ? `key:${principal.keyId}` : `user:${principal.userId}`;
}

export interface BuilderTurnInput {
  /** Unique per call; also the Temporal update id, so a resent call is the same turn. */
  turnId: string;
  message: string;
  principal: BuilderPrincipal;
  /** Epoch ms: a call still queued behind another turn at this moment answers "busy" and changes nothing. */
  waitUntil: number;
  at: number;
}

/** One finished turn, as the caller reads it. */
export interface BuilderReply {
  turnId: string;
  text: string;
  /** What awaits the owner's `yes`, when the builder asked for consent. */
  awaitingConfirmation?: string;
  /** Nothing was changed: the thread was busy. */
  busy?: boolean;
  /** Secrets shown once (a new trigger's secret, a new builder key), sealed: only the API opens them for the caller. */
  sealedSecrets?: string[];
  at: number;
}

export interface BuilderTurnResult {
  /** Results of earlier turns whose callers stopped waiting, oldest first: shown before this one. */
  late: BuilderReply[];
  reply: BuilderReply;
}

/** A tool call the builder's model asked for, or one awaiting consent. */
export interface BuilderToolCall {
  id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

/** What the builder's model said in one step: text, or tool calls to run first. */
export interface BuilderThought {
  text: string;
  toolCalls: BuilderToolCall[];
  /**
   * The model's tokens, when the model answered (absent for a refusal decided before it, and in steps recorded before
   * builder turns were charged): the turn is charged for them (`BuilderChargeInput`).
   */
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * A builder turn that asked the platform's model, charged to its workspace as a run that finishes is (README, Credits):
 * 1 + one credit per started 1 000 tokens of the model steps that answered; once per turn whatever retries happen.
 */
export interface BuilderChargeInput {
  workspaceId: string;
  turnId: string;
  promptTokens: number;
  completionTokens: number;
}

/** A chat message of a builder conversation as the model sees it (the OpenAI wire shape, kept plain). */
export type BuilderMessage =
  | { role: 'user' | 'assistant'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** What running one tool call did. */
export interface BuilderActOutcome {
  /** For the model: the result, or why nothing was done. */
  content: string;
  /** The call changes something visible to customers, irreversible or landing in another system: not done, asked. */
  needsConsent?: { summary: string };
  /** The call changed something (a repeat of it in the same turn is not performed). */
  changed?: boolean;
  /** Secrets to show the caller once, sealed (never in the model's messages or in plain text in the history). */
  showOnce?: string[];
  /** The content quotes visitors or other systems: the rest of the turn changes nothing without consent. */
  untrusted?: boolean;
}

export interface BuilderStepInput {
  workspaceId: string;
  principal: BuilderPrincipal;
  messages: BuilderMessage[];
  /** First step of a turn: refusals of what the builder never does are decided before the model (contract, Builder over MCP, behaviour of `constructor` rules 6, 7). */
  screen: boolean;
  /** What awaited confirmation and was not confirmed by this message. */
  declined?: string;
}

export interface BuilderActInput {
  workspaceId: string;
  principal: BuilderPrincipal;
  call: BuilderToolCall;
  /** The owner said yes to exactly this call. */
  consented: boolean;
  /**
   * The turn read untrusted content before this call, or the history it gave the model holds a reply written after
   * such a read: a change is asked first.
   */
  tainted?: boolean;
}

export const builderTurnUpdate = defineUpdate<BuilderTurnResult, [BuilderTurnInput]>('builderTurn');

/** The API wrote these turns' results to its caller: they are not repeated at the start of the next response. */
export const builderDeliveredSignal = defineSignal<[{ turnIds: string[] }]>('builderDelivered');

/**
 * `builder/{workspace}/{owner}/{surface}` or `…/mcp:{thread}`: one workflow per builder conversation, and a
 * principal's conversations are its own (two programs using the same thread name hold two conversations).
 */
export function builderThreadWorkflowId(input: BuilderThreadInput): string {
  const base = input.owner ? `builder/${input.workspaceId}/${input.owner}` : `builder/${input.workspaceId}`;
  return input.thread === null ? `${base}/${input.surface}` : `${base}/${input.surface}:${input.thread}`;
}
