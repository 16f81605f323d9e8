import { failure } from '../../workflows/failures';
import type { AgentRunInput, AnswerSource, GeneratedAnswer, ToolTurn } from '../../workflows/contracts/agent-run';
import { type Llm, LlmError } from '../llm';
import type { DeltaPublisher, TurnStream } from '../streams/publisher';
import { storableText } from '../text';
import type { RunContext } from './bookkeeping';
import { buildPrompt, chunkWords, continuation, extractiveAnswer, extractivePassages, toolFollowUps } from './prompt';
import { sourcesOfAnswer } from './sources';
import { cannotAnswerTool, gaveUp, unansweredOutcome, unansweredText } from './limits';

export interface GenerateDeps {
  /** Null when no LLM is configured: answers are then extractive (docs/architecture.md, Without a model). */
  llm: Llm | null;
  defaultModel: string;
  deltas: DeltaPublisher;
}

/**
 * One model call of a run (or the extractive answer without a model). With a stream turn id, its text is published
 * as it arrives (lib/streams/publisher.ts). A retry of a call that was cut off mid-stream (its worker died, its database write
 * failed) continues the text the visitor already saw instead of starting again: the model is asked for the rest of
 * it, and a call whose whole text was streamed is not asked again at all. A backend failure becomes a non-retryable
 * `llm_unavailable` or `llm_overloaded`: retrying here cannot help the visitor who is waiting, the contract's 503 codes
 * tell the client what to do.
 */
export async function generateAnswer(
  deps: GenerateDeps,
  input: AgentRunInput,
  ctx: RunContext,
  transcript: ToolTurn[],
  opts: {
    /** The turn's stream, claimed already for this step (by startRun's statement: see activities/agent-run.ts). */
    stream?: TurnStream;
    /** The model's answer leaves its stream open: the caller ends it (activities/agent-run.ts, answerMessage). */
    callerEndsStream?: boolean;
  } = {},
): Promise<GeneratedAnswer> {
  const stream = input.streamTurnId
    ? (opts.stream ?? (await deps.deltas.open(input.streamTurnId, stepOf(transcript))))
    : null;
  const endStream = async () => {
    if (!opts.callerEndsStream) await stream?.finish();
  };
  const model = ctx.model ?? deps.defaultModel;
  // A visitor's turn may end in "I cannot answer that" (lib/runs/limits.ts); a trigger's run has no one to offer.
  const chatTurn = input.triggerKind === 'message';
  try {
    if (stream?.complete) {
      // The first attempt's whole text reached the visitor; its usage was lost with it, so only the base credit.
      await stream.finish();
      const given = deps.llm ? ctx.passages : extractivePassages(ctx.passages);
      return {
        text: stream.prefix,
        ...sourcesField(sourcesOfAnswer(given, stream.prefix)),
        model: deps.llm ? model : 'extractive',
        promptTokens: 0,
        completionTokens: 0,
      };
    }
    if (!deps.llm) {
      // A chat question no passage matches is one the agent cannot answer: it says so, and what happens next.
      if (!ctx.passages.length && chatTurn) {
        const unanswered = unansweredOutcome(ctx.limits);
        const text = unansweredText(unanswered, '', extractiveAnswer([]));
        if (stream) await streamKnownText(stream, text);
        return { text, unanswered, model: 'extractive', promptTokens: 0, completionTokens: 0 };
      }
      // The quoted passages are the answer's sources.
      const text = extractiveAnswer(ctx.passages);
      if (stream) await streamKnownText(stream, text);
      const sources = sourcesOfAnswer(extractivePassages(ctx.passages), text);
      return { text, ...sourcesField(sources), model: 'extractive', promptTokens: 0, completionTokens: 0 };
    }
    const prefix = stream?.prefix ?? '';
    const result = await deps.llm.complete({
      model,
      messages: [...buildPrompt(input, ctx), ...toolFollowUps(transcript), ...continuation(prefix)],
      tools: [
        ...ctx.tools.map((t) => ({
          type: 'function' as const,
          function: { name: t.name, description: t.description, parameters: t.parameters },
        })),
        ...(chatTurn ? [cannotAnswerTool] : []),
      ],
      // A little under the activity's own limit, so the backend's timeout is what gets reported.
      timeoutMs: Math.max(500, input.turnTimeoutMs - 300),
      onDelta: stream ? (delta) => stream.push(delta) : undefined,
    });
    const usage = { model: result.model, promptTokens: result.promptTokens, completionTokens: result.completionTokens };
    const limit = gaveUp(result.toolCalls);
    if (chatTurn && limit.gaveUp && !limit.others.length) {
      // The model says its knowledge does not hold the answer: the visitor reads so plainly, and what happens next.
      const unanswered = unansweredOutcome(ctx.limits);
      const text = storableText(unansweredText(unanswered, prefix + result.text));
      stream?.push(text.slice((prefix + result.text).length));
      await endStream();
      return { text, unanswered, ...usage };
    }
    await endStream();
    // The model's text goes into Postgres: a NUL or an unpaired surrogate in it must not fail the run.
    const text = storableText(prefix + result.text);
    return {
      text,
      ...sourcesField(sourcesOfAnswer(ctx.passages, text)),
      ...usage,
      ...(limit.others.length ? { toolCalls: limit.others } : {}),
    };
  } catch (err) {
    // What was sent stays sent: a retry continues after it.
    await stream?.close();
    if (err instanceof LlmError) throw failure(err.kind, err.message, [{ retryAfter: err.retryAfterSeconds }]);
    throw err;
  }
}

/** An answer's `sources`, present only when it drew on some. */
function sourcesField(sources: AnswerSource[] | undefined): { sources?: AnswerSource[] } {
  return sources?.length ? { sources } : {};
}

/** The model call of a run this is: one more for each tool round already in the transcript. */
function stepOf(transcript: ToolTurn[]): number {
  return transcript.filter((t) => t.role === 'assistant').length;
}

/**
 * Streams a text that does not depend on the attempt (extractive, cached) after what an earlier attempt already
 * streamed of it, a few words a fragment, like a model's.
 */
async function streamKnownText(stream: TurnStream, text: string): Promise<void> {
  // The same text as before continues where it stopped; a different one (the knowledge changed meanwhile) cannot
  // take back what was shown, and the API says so with an error frame when the stored answer differs.
  const rest = text.startsWith(stream.prefix) ? text.slice(stream.prefix.length) : '';
  for (const part of chunkWords(rest)) stream.push(part);
  await stream.finish();
}

/**
 * A cached answer given as this run's answer: streamed like a model's (a few words a fragment) when the turn streams,
 * with no tokens used (the run costs its base credit only).
 */
export async function replayCached(
  deps: Pick<GenerateDeps, 'deltas'>,
  input: AgentRunInput,
  cached: { answer: string; model: string; sources: AnswerSource[] | null },
  opened?: TurnStream,
): Promise<GeneratedAnswer> {
  if (input.streamTurnId) {
    const stream = opened ?? (await deps.deltas.open(input.streamTurnId, 0));
    try {
      await streamKnownText(stream, cached.answer);
    } catch (err) {
      await stream.close();
      throw err;
    }
  }
  return {
    text: cached.answer,
    ...sourcesField(cached.sources ?? undefined),
    model: `cache:${cached.model}`,
    promptTokens: 0,
    completionTokens: 0,
  };
}
