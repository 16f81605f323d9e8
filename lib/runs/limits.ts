import type { ToolCall, Unanswered, WhenUnanswered } from '../../workflows/contracts/agent-run';

/**
 * An agent that knows its limits (docs/decisions/059-agent-knows-its-limits.md). In a chat turn the model is
 * given one more tool, `cannot_answer`, to call when its knowledge does not hold the answer; without a model, a
 * question no passage matches is one it cannot answer. Either way the platform says so plainly, in its own words,
 * and — with handoff on — offers a person or hands the conversation over, as the owner chose.
 */
export const CANNOT_ANSWER_TOOL = 'cannot_answer';

export const cannotAnswerTool = {
  type: 'function' as const,
  function: {
    name: CANNOT_ANSWER_TOOL,
    description:
      'Call this instead of answering when the visitor asks something the knowledge passages do not answer and you cannot answer it reliably. Do not call it for greetings, thanks or small talk, nor when the passages answer the question.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
};

/** What the agent's settings say about a turn it cannot answer. */
export interface LimitSettings {
  handoffEnabled: boolean;
  whenUnanswered: WhenUnanswered;
}

/** Absent settings (a run context recorded before they existed) only say so. */
export function unansweredOutcome(settings: LimitSettings | undefined): Unanswered {
  return settings?.handoffEnabled ? settings.whenUnanswered : 'said';
}

const SORRY = "I'm sorry, I can't answer that from what I know.";
const NEXT_STEP: Record<Unanswered, string> = {
  offer: 'Would you like to talk to a person from the team?',
  hand_over: "I've asked a person from the team to help; they will reply here.",
  said: '',
};

/**
 * The visitor's answer: what the model wrote before it gave up (if anything; the visitor may have seen it already)
 * or the platform's plain apology, then what happens next.
 */
export function unansweredText(outcome: Unanswered, modelText = '', apology = SORRY): string {
  const next = NEXT_STEP[outcome];
  // The model's words stay as they are: the visitor may have read them already.
  if (modelText.trim()) return next ? `${modelText}\n\n${next}` : modelText;
  return next ? `${apology} ${next}` : apology;
}

/** Whether the model gave up through the tool; its other tool calls (if any) go on as usual. */
export function gaveUp(toolCalls: ToolCall[]): { gaveUp: boolean; others: ToolCall[] } {
  const others = toolCalls.filter((c) => c.name !== CANNOT_ANSWER_TOOL);
  return { gaveUp: others.length < toolCalls.length, others };
}
