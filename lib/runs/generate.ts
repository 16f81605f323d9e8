import { failure } from '../../workflows/failures';
import type { AgentRunInput, GeneratedAnswer, ToolTurn } from '../../workflows/messages';
import { type Llm, LlmError } from '../llm';
import type { DeltaPublisher } from '../streams';
import { storableText } from '../text';
import type { RunContext } from './bookkeeping';
import { buildPrompt, chunkWords, extractiveAnswer, toolFollowUps } from './prompt';

export interface GenerateDeps {
  /** Null when no LLM is configured: answers are then extractive (DESIGN.md). */
  llm: Llm | null;
  defaultModel: string;
  deltas: DeltaPublisher;
}

/**
 * One model call of a run (or the extractive answer without a model). With a stream turn id, fragments are
 * published as they arrive under `attemptKey`, which lets the API tell a retried attempt's fragments from the first
 * one's. A backend failure becomes a non-retryable `llm_unavailable` or `llm_overloaded`: retrying here cannot help
 * the visitor who is waiting, the spec's 503 codes tell the client what to do.
 */
export async function generateAnswer(
  deps: GenerateDeps,
  input: AgentRunInput,
  ctx: RunContext,
  transcript: ToolTurn[],
  attemptKey: string,
): Promise<GeneratedAnswer> {
  const onDelta = input.streamTurnId
    ? (delta: string) => deps.deltas.publish(input.streamTurnId!, attemptKey, delta)
    : undefined;
  try {
    if (!deps.llm) {
      const text = extractiveAnswer(ctx.passages);
      if (onDelta) for (const part of chunkWords(text)) await onDelta(part);
      return { text, model: 'extractive', promptTokens: 0, completionTokens: 0 };
    }
    const result = await deps.llm.complete({
      model: ctx.model ?? deps.defaultModel,
      messages: [...buildPrompt(input, ctx), ...toolFollowUps(transcript)],
      tools: ctx.tools.map((t) => ({
        type: 'function' as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
      // A little under the activity's own limit, so the backend's timeout is what gets reported.
      timeoutMs: Math.max(500, input.turnTimeoutMs - 300),
      onDelta,
    });
    return {
      // The model's text goes into Postgres: a NUL or an unpaired surrogate in it must not fail the run.
      text: storableText(result.text),
      model: result.model,
      promptTokens: result.promptTokens,
      completionTokens: result.completionTokens,
      ...(result.toolCalls.length ? { toolCalls: result.toolCalls } : {}),
    };
  } catch (err) {
    if (err instanceof LlmError) throw failure(err.kind, err.message, [{ retryAfter: err.retryAfterSeconds }]);
    throw err;
  } finally {
    if (input.streamTurnId) await deps.deltas.flush(input.streamTurnId);
  }
}

/**
 * A cached answer given as this run's answer: streamed like a model's (a few words a fragment) when the turn streams,
 * with no tokens used (the run costs its base credit only).
 */
export async function replayCached(
  deps: Pick<GenerateDeps, 'deltas'>,
  input: AgentRunInput,
  cached: { answer: string; model: string },
  attemptKey: string,
): Promise<GeneratedAnswer> {
  if (input.streamTurnId) {
    for (const part of chunkWords(cached.answer)) await deps.deltas.publish(input.streamTurnId, attemptKey, part);
    await deps.deltas.flush(input.streamTurnId);
  }
  return { text: cached.answer, model: `cache:${cached.model}`, promptTokens: 0, completionTokens: 0 };
}
