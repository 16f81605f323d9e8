import type { Passage } from '../knowledge/retrieve';
import { passageContext } from '../knowledge/store';
import { sourceRefOf } from './sources';
import type { ChatMessage } from '../llm';
import type { AgentRunInput, ToolTurn } from '../../workflows/contracts/agent-run';

/** What the model is given for one run: the agent, its knowledge and the conversation so far. */
export interface PromptContext {
  instructions: string;
  passages: Passage[];
  history: { author: string; text: string }[];
}

/** A passage is cut to this many characters in the prompt (and in the run's record of what it read). */
export const PASSAGE_CHARS = 1_500;

/** Platform rules every agent gets before its own instructions. */
const PLATFORM_RULES = [
  'You are an assistant embedded on a website, answering its visitors.',
  'Use the knowledge passages below when they are relevant; do not invent facts that are not in them.',
  'If the passages do not cover the question, say so briefly and offer what you can.',
  'Each passage starts with the number of its source in square brackets: after a sentence that uses a passage, cite that number the same way, like [1].',
  'Answer in the language of the visitor.',
].join(' ');

/**
 * Where a passage sits, as the model reads it before the passage: "Lamp manual › Installation › Wi-Fi (page 2): ".
 * The headings say what a passage is about when its own words do not (a table row, a step of a list).
 */
export function placeOf(p: Passage): string {
  const place = passageContext(p.title, p.headingPath ?? []);
  const page = p.page !== undefined ? ` (page ${p.page})` : '';
  return place || page ? `${place}${page}: ` : '';
}

/** The messages of one model call: system prompt (rules, instructions, page, passages), history, the input. */
export function buildPrompt(input: Pick<AgentRunInput, 'input' | 'pageContext'>, ctx: PromptContext): ChatMessage[] {
  // Numbered by source (lib/runs/sources.ts): the numbers the answer cites name its sources.
  const refs = sourceRefOf(ctx.passages);
  const knowledge = ctx.passages.length
    ? ctx.passages.map((p, i) => `[${refs[i]}] ${placeOf(p)}${p.text.slice(0, PASSAGE_CHARS)}`).join('\n\n')
    : '(no passages matched this message)';
  const system = [
    PLATFORM_RULES,
    ctx.instructions ? `Instructions from the owner of this agent:\n${ctx.instructions}` : '',
    input.pageContext ? `The visitor is on this page:\n${input.pageContext}` : '',
    `Knowledge passages:\n${knowledge}`,
  ]
    .filter(Boolean)
    .join('\n\n');
  const history: ChatMessage[] = ctx.history.map((m) =>
    m.author === 'visitor' ? { role: 'user', content: m.text } : { role: 'assistant', content: m.text },
  );
  return [{ role: 'system', content: system }, ...history, { role: 'user', content: input.input }];
}

/**
 * What asks the model for the rest of an answer whose beginning the visitor already saw (a retry of a turn cut off
 * mid-stream): that beginning as the assistant's words, and the request to go on from its last character.
 */
const CONTINUE_INSTRUCTION =
  'Your answer above was cut off. Continue it from exactly where it stops, without repeating any of it.';

export function continuation(prefix: string): ChatMessage[] {
  if (!prefix) return [];
  return [
    { role: 'assistant', content: prefix },
    { role: 'user', content: CONTINUE_INSTRUCTION },
  ];
}

/** The tool calls and results of this run so far, as the model's follow-up messages. */
export function toolFollowUps(transcript: ToolTurn[]): ChatMessage[] {
  return transcript.map((t) =>
    t.role === 'assistant'
      ? {
          role: 'assistant',
          content: t.text || null,
          tool_calls: t.toolCalls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : { role: 'tool', tool_call_id: t.toolCallId, content: t.content },
  );
}

/** The passages an extractive answer quotes: the best three. */
export function extractivePassages(passages: Passage[]): Passage[] {
  return passages.slice(0, 3);
}

/** Without an LLM, the answer is the best-matching passages, stated as such (a real, documented mode). */
export function extractiveAnswer(passages: Passage[]): string {
  if (!passages.length) {
    return "I couldn't find anything about that in this site's knowledge base. (No AI model is configured, so I can only quote what the knowledge base says.)";
  }
  const quoted = extractivePassages(passages).map((p) => `• ${placeOf(p)}${p.text.slice(0, 600).trim()}`);
  return `Here is what the knowledge base says about this:\n\n${quoted.join('\n\n')}`;
}

/** An extractive answer streamed a few words at a time, like a model would. */
export function* chunkWords(text: string, size = 4): Generator<string> {
  const words = text.split(/(?<=\s)/);
  for (let i = 0; i < words.length; i += size) yield words.slice(i, i + size).join('');
}
