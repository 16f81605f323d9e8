import type { FailureType } from '../workflows/failures';
import OpenAI from 'openai';
import { createModelFetch, readText } from './http/model-fetch';
import { SseDecoder } from './sse-decoder';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ToolDefinition = OpenAI.Chat.Completions.ChatCompletionTool;

export interface LlmResult {
  text: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  model: string;
  promptTokens: number;
  completionTokens: number;
}

/** The closed set of LLM failure kinds, mapped to the contract's 503 codes by the API. */
export type LlmFailureKind = Extract<FailureType, 'llm_unavailable' | 'llm_overloaded'>;

export class LlmError extends Error {
  constructor(
    readonly kind: LlmFailureKind,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export interface Llm {
  readonly model: string;
  complete(input: {
    model?: string;
    messages: ChatMessage[];
    tools?: ToolDefinition[];
    timeoutMs: number;
    /** The most tokens the answer may have (sent as `max_completion_tokens`); absent, the backend's default. */
    maxTokens?: number;
    /** Sampling temperature; absent, the backend's default. */
    temperature?: number;
    /** Called with each text fragment as it arrives; when given, the request is streamed. */
    onDelta?: (delta: string) => Promise<void> | void;
  }): Promise<LlmResult>;
  embed?(texts: string[]): Promise<number[][]>;
}

/**
 * Classifies a failure of the backend (contract, Conversation: 503 codes). Key or funds problems are
 * `llm_unavailable` (retrying is pointless, the owner must act); busy, 429, 5xx, timeouts and connection trouble
 * are `llm_overloaded` (retrying makes sense).
 */
export function classifyLlmError(err: unknown): LlmError | undefined {
  if (err instanceof LlmError) return err;
  // Only failures of the backend are classified; anything else (a body that is not JSON, a bug) stays what it is
  // and becomes an internal error.
  if (!(err instanceof OpenAI.APIError)) return undefined;
  const e = err as {
    status?: number;
    code?: string | null;
    type?: string;
    headers?: Headers | Record<string, string>;
    name?: string;
    message?: string;
  };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const code = e?.code ?? undefined;
  const header = (name: string) =>
    e?.headers instanceof Headers ? e.headers.get(name) : (e?.headers as Record<string, string> | undefined)?.[name];
  const retryAfter = Number(header('retry-after'));
  const retry = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.ceil(retryAfter) : undefined;
  if (
    code === 'insufficient_quota' ||
    status === 402 ||
    status === 401 ||
    status === 403 ||
    code === 'invalid_api_key'
  ) {
    return new LlmError('llm_unavailable', 'The AI backend refused the key or has no funds left');
  }
  if (status === 404 || code === 'model_not_found') {
    return new LlmError('llm_unavailable', 'The configured model does not exist at the AI backend');
  }
  if (status === 429) return new LlmError('llm_overloaded', 'The AI backend is rate limiting requests', retry ?? 5);
  if (status !== undefined && status >= 500)
    return new LlmError('llm_overloaded', 'The AI backend is failing or busy', retry ?? 5);
  if (e?.name === 'APIConnectionTimeoutError' || /timed? ?out/i.test(e?.message ?? '')) return tooLate();
  if (status === 400)
    return new LlmError('llm_unavailable', `The AI backend rejected the request: ${e?.message ?? ''}`.trim());
  // APIConnectionError and its timeout subclass have no status: the backend could not be reached in time. The
  // network's own reason (ECONNRESET, ENOTFOUND…) goes with it, for the run's record and the Temporal UI.
  const reason = (e as { cause?: { code?: unknown } })?.cause?.code ?? code;
  const named = typeof reason === 'string' && /^E[A-Z_]+$/.test(reason) ? ` (${reason})` : '';
  return new LlmError('llm_overloaded', `The AI backend could not be reached${named}`, 5);
}

/** The backend used up the call's budget: before its answer began, or while it streamed it. */
function tooLate(): LlmError {
  return new LlmError('llm_overloaded', 'The AI backend did not answer in time', 10);
}

/**
 * The `openai` client against any OpenAI-compatible endpoint. Built once by the worker and injected into
 * activities; the client's own retries are off because the activity and the contract's 503 codes own retrying.
 */
export function createOpenAiLlm(opts: {
  apiKey: string;
  baseURL?: string;
  model: string;
  embeddingModel?: string;
  /**
   * After a network read that brought text, a streamed answer's connection rests this long before the next read
   * (lib/http/model-fetch.ts, readText): what the model sends meanwhile comes in one read. 0 reads at once.
   */
  readRestMs?: number;
}): Llm {
  const transport = createModelFetch();
  const client = new OpenAI({ apiKey: opts.apiKey, baseURL: opts.baseURL, maxRetries: 0, fetch: transport.fetch });
  return {
    model: opts.model,
    async complete({ model, messages, tools, timeoutMs, onDelta, maxTokens, temperature }) {
      const used = model ?? opts.model;
      const sampling = {
        ...(maxTokens !== undefined ? { max_completion_tokens: maxTokens } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
      };
      try {
        if (!onDelta) {
          const res = await client.chat.completions.create(
            { model: used, messages, ...(tools?.length ? { tools } : {}), ...sampling },
            { timeout: timeoutMs },
          );
          const choice = res.choices[0];
          return {
            text: choice?.message?.content ?? '',
            toolCalls: (choice?.message?.tool_calls ?? [])
              .filter((c) => c.type === 'function')
              .map((c) => ({
                id: c.id,
                name: (c as { function: { name: string } }).function.name,
                arguments: (c as { function: { arguments: string } }).function.arguments,
              })),
            model: res.model ?? used,
            promptTokens: res.usage?.prompt_tokens ?? 0,
            completionTokens: res.usage?.completion_tokens ?? 0,
          };
        }
        // The request goes through the client (its headers, errors for a refused request), the stream's body is
        // read here from the connection itself (lib/http/model-fetch.ts): every event a network read completes is
        // handled at once and its text handed on in one piece (docs/decisions/119-streamed-turn-cpu.md).
        // The client's timeout ends when the answer's headers come; its body has what is left of the same budget.
        const deadline = Date.now() + timeoutMs;
        const response = await client.chat.completions
          .create(
            {
              model: used,
              messages,
              stream: true,
              stream_options: { include_usage: true },
              ...(tools?.length ? { tools } : {}),
              ...sampling,
            },
            { timeout: timeoutMs },
          )
          .asResponse();
        const body = transport.bodyOf(response);
        if (!body) throw new Error('The model stream did not come through lib/http/model-fetch');
        let text = '';
        let promptTokens = 0;
        let completionTokens = 0;
        let modelName = used;
        const calls = new Map<number, { id: string; name: string; arguments: string }>();
        const decoder = new SseDecoder();
        let finished = false; // `[DONE]` came: what follows it is read and ignored, as the `openai` package does
        const late = setTimeout(() => body.destroy(tooLate()), Math.max(0, deadline - Date.now()));
        await readText(body, (read, rest) => {
          if (finished) return;
          let piece = '';
          for (const sse of decoder.push(read)) {
            if (sse.data.startsWith('[DONE]')) {
              finished = true;
              break;
            }
            const chunk = JSON.parse(sse.data) as OpenAI.Chat.Completions.ChatCompletionChunk & { error?: unknown };
            // An error sent inside the stream, reported as the `openai` package reports it.
            if (chunk?.error || sse.event === 'error')
              throw new OpenAI.APIError(undefined, (chunk?.error ?? chunk) as object, undefined, response.headers);
            modelName = chunk.model ?? modelName;
            if (chunk.usage) {
              promptTokens = chunk.usage.prompt_tokens ?? 0;
              completionTokens = chunk.usage.completion_tokens ?? 0;
            }
            const delta = chunk.choices?.[0]?.delta;
            if (delta?.content) piece += delta.content;
            for (const tc of delta?.tool_calls ?? []) {
              const call = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
              if (tc.id) call.id = tc.id;
              if (tc.function?.name) call.name += tc.function.name;
              if (tc.function?.arguments) call.arguments += tc.function.arguments;
              calls.set(tc.index, call);
            }
          }
          if (!piece) return;
          text += piece;
          // Text came: what the model sends next can wait a little and come in one read (the first piece did not).
          rest(opts.readRestMs ?? 0);
          return onDelta(piece);
        }).finally(() => clearTimeout(late));
        decoder.end();
        return { text, toolCalls: [...calls.values()], model: modelName, promptTokens, completionTokens };
      } catch (err) {
        throw classifyLlmError(err) ?? err;
      }
    },
    ...(opts.embeddingModel
      ? {
          async embed(texts: string[]) {
            try {
              const res = await client.embeddings.create({ model: opts.embeddingModel!, input: texts });
              return res.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
            } catch (err) {
              throw classifyLlmError(err) ?? err;
            }
          },
        }
      : {}),
  };
}
