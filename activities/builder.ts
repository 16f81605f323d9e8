import { Context } from '@temporalio/activity';
import { refusalFor } from '../lib/builder/screen';
import { builderSystemPrompt } from '../lib/builder/prompt';
import { type BuilderPorts, builderToolDefinitions, runBuilderTool } from '../lib/builder/tools';
import type { CreditService } from '../lib/credits/service';
import { type ChatMessage, type Llm, LlmError } from '../lib/llm';
import { failure } from '../workflows/failures';
import type {
  BuilderActInput,
  BuilderActOutcome,
  BuilderChargeInput,
  BuilderStepInput,
  BuilderThought,
} from '../workflows/contracts/builder-thread';

export interface BuilderDeps {
  /** Null when no LLM is configured: the builder says so (the API answers before a turn even starts). */
  llm: Llm | null;
  /** The workspace's credits: a model step needs some left, and a turn that asked the model is charged. */
  credits: Pick<CreditService, 'balance' | 'charge'>;
  builder: BuilderPorts & {
    /** One model call of the builder. */
    stepTimeoutMs: number;
  };
}

/** Keeps a long activity alive in the server's eyes, so a dead worker is noticed by the heartbeat timeout. */
async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => Context.current().heartbeat(), 2_000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The builder's two steps (workflows/builder-thread.ts): a model step that decides what to do, and a tool call that
 * does it through the services. Both are ordinary activities: each finished one is kept in the thread's history, so
 * a worker that dies mid-turn costs only the step it was running.
 */
export function createBuilderActivities(deps: BuilderDeps) {
  return {
    async thinkBuilderStep(input: BuilderStepInput): Promise<BuilderThought> {
      if (input.screen) {
        const last = [...input.messages].reverse().find((m) => m.role === 'user');
        const refusal = last && typeof last.content === 'string' ? refusalFor(last.content, input.principal) : null;
        if (refusal) return { text: refusal, toolCalls: [] };
      }
      const llm = deps.llm;
      if (!llm) throw failure('llm_unavailable', 'The builder needs an LLM: set OPENAI_API_KEY for the worker');
      return withHeartbeat(async () => {
        const marked = input.principal.kind === 'builder_key' ? input.principal.botId : null;
        const [agents, balance] = await Promise.all([
          deps.builder.overview.agents(input.workspaceId, marked),
          deps.credits.balance(input.workspaceId),
        ]);
        // The platform's model is paid in credits, as runs are (README, Credits): with none left, no model step.
        if (balance <= 0) throw failure('no_credits', 'The workspace has no credits left for the builder');
        const system = builderSystemPrompt({ principal: input.principal, agents, declined: input.declined });
        try {
          const res = await llm.complete({
            messages: [{ role: 'system', content: system }, ...(input.messages as ChatMessage[])],
            tools: builderToolDefinitions(input.principal),
            timeoutMs: deps.builder.stepTimeoutMs,
          });
          return {
            text: res.text,
            toolCalls: res.toolCalls,
            promptTokens: res.promptTokens,
            completionTokens: res.completionTokens,
          };
        } catch (err) {
          if (err instanceof LlmError) throw failure(err.kind, err.message);
          throw err;
        }
      });
    },

    /**
     * Charges a turn that asked the model (README, Credits), keyed by the turn: a retried activity, or a turn replayed,
     * charges it once. The builder uses the platform's default model, whose weight is 1.
     */
    async chargeBuilderTurn(input: BuilderChargeInput): Promise<void> {
      await deps.credits.charge({
        workspaceId: input.workspaceId,
        key: `builder:${input.turnId}`,
        reason: 'builder turn',
        promptTokens: input.promptTokens,
        completionTokens: input.completionTokens,
      });
    },

    async actBuilderTool(input: BuilderActInput): Promise<BuilderActOutcome> {
      return withHeartbeat(() =>
        runBuilderTool(deps.builder, {
          workspaceId: input.workspaceId,
          principal: input.principal,
          name: input.call.name,
          arguments: input.call.arguments,
          consented: input.consented,
          tainted: input.tainted,
        }),
      );
    },
  };
}

export type BuilderActivities = ReturnType<typeof createBuilderActivities>;
