import type { Llm } from '../llm';

/**
 * The operator's briefing (docs/decisions/062-operator-briefing.md): when a conversation is handed to a person,
 * a few sentences of what the visitor wants, what the agent already said and what is open — the model's, or without
 * one (or when it fails or is slow) an extractive one built from the visitor's own words. Shown at the top of the
 * transcript and sent as `briefing` with `escalated`.
 */
export interface BriefingDeps {
  llm: Llm | null;
  defaultModel: string;
}

export interface BriefingLine {
  author: string;
  text: string;
}

/** The hand-over waits for the briefing: a slow model gives way to the extractive one. */
const MODEL_TIMEOUT_MS = 4_000;
/** The conversation the briefing reads: its last messages. */
export const BRIEFING_MESSAGES = 20;
const MAX_CHARS = 600;
const QUOTE_CHARS = 200;

const INSTRUCTION =
  'You brief a person from the support team who is taking over this conversation from an AI assistant. In at most three short sentences of plain text, say what the visitor wants, what the assistant already told them, and what is still open. Write in the language of the visitor. Do not greet, do not address the visitor.';

const LABEL: Record<string, string> = { visitor: 'Visitor', bot: 'Assistant', operator: 'Team' };

export async function briefing(deps: BriefingDeps, lines: BriefingLine[]): Promise<string> {
  const said = lines.filter((l) => l.text.trim());
  if (!said.some((l) => l.author === 'visitor')) return 'The visitor asked for a person before writing anything.';
  if (deps.llm) {
    try {
      const result = await deps.llm.complete({
        model: deps.defaultModel,
        messages: [
          { role: 'system', content: INSTRUCTION },
          { role: 'user', content: said.map((l) => `${LABEL[l.author] ?? l.author}: ${l.text}`).join('\n') },
        ],
        timeoutMs: MODEL_TIMEOUT_MS,
      });
      const text = result.text.trim();
      if (text && !result.toolCalls.length) return cut(text, MAX_CHARS);
    } catch {
      // The extractive briefing below serves: the hand-over must not wait on or fail with the model.
    }
  }
  return extractiveBriefing(said);
}

/** Without a model: the visitor's first and latest words, and the agent's last answer. */
export function extractiveBriefing(lines: BriefingLine[]): string {
  const visitor = lines.filter((l) => l.author === 'visitor').map((l) => oneLine(l.text));
  const answers = lines.filter((l) => l.author === 'bot').map((l) => oneLine(l.text));
  const parts = [`Asked: “${cut(visitor[0], QUOTE_CHARS)}”`];
  if (visitor.length > 1) parts.push(`Latest: “${cut(visitor.at(-1)!, QUOTE_CHARS)}”`);
  parts.push(
    answers.length
      ? `The agent's last answer${answers.length > 1 ? ` (of ${answers.length})` : ''}: “${cut(answers.at(-1)!, QUOTE_CHARS)}”`
      : 'The agent had not answered.',
  );
  return parts.join('\n');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const at = text.lastIndexOf(' ', max - 1);
  return `${text.slice(0, at > max / 2 ? at : max - 1)}…`;
}
