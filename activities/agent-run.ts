import { Context } from '@temporalio/activity';
import { randomUUID } from 'node:crypto';
import { applyTransition } from '../lib/conversations/transitions';
import type { Db } from '../lib/db';
import type { Passage } from '../lib/knowledge/retrieve';
import { toolsFor } from '../lib/actions/tools';
import type { ModelCatalogue } from '../lib/billing/models';
import {
  type RunContext,
  announcementOf,
  finishRun,
  readOf,
  recordFailedBeforeStart,
  startRun,
  withSearchUsage,
} from '../lib/runs/bookkeeping';
import { cacheKey, cachedAnswer, questionKey } from '../lib/runs/answer-cache';
import { announce, outcomeNotice } from '../lib/announcements';
import { retrying } from '../lib/retry';
import { type GenerateDeps, generateAnswer, replayCached } from '../lib/runs/generate';
import { type FailureInfo, failureInfo } from '../workflows/failures';
import {
  type AgentRunInput,
  type GeneratedAnswer,
  type MessageTurnOutcome,
  type ToolTurn,
  runWorkflowId,
} from '../workflows/contracts/agent-run';
import { type TransitionInput, type TurnResult } from '../workflows/contracts/conversation';

export type { MessageTurnOutcome } from '../workflows/contracts/agent-run';

export interface AgentRunDeps extends GenerateDeps {
  db: Db;
  retrieve: (botId: string, query: string) => Promise<Passage[]>;
  /** Which models each plan allows, and their credit weights (lib/billing/models.ts). */
  models: ModelCatalogue;
  /**
   * How long a turn's database writes keep retrying through a Postgres outage (STORAGE_OUTAGE_RETRY_MS): the turn
   * in flight then answers once the database is back instead of failing. Every write is idempotent on the turn's ids.
   */
  storageRetryMs?: number;
}

/** The workflow this activity runs for (the run's own id when called outside one, as in tests). */
function workflowIdOf(input: { runId: string }): string {
  return Context.current().info.workflowExecution?.workflowId ?? runWorkflowId(input.runId);
}

/** Backend failures the visitor's client is told about; anything else fails the activity (and is retried). */
const TOLD_TO_VISITOR = new Set<FailureInfo['type']>(['llm_unavailable', 'llm_overloaded', 'no_credits']);

/**
 * The steps of a run (docs/architecture.md, Workflows, agentRun: load agent → retrieve knowledge → LLM → persist → charge credits), as
 * activities over the domain code in lib/runs: the workflow calls them in order, and a chat turn runs them all in one
 * local activity (`answerMessage`). Activities never call each other.
 */
export function createAgentRunActivities(deps: AgentRunDeps) {
  const startDeps = startDepsOf(deps);

  return {
    /** Records the run as started and gathers what the model needs: the agent, knowledge and recent history. */
    startRun(input: AgentRunInput): Promise<RunContext> {
      return startRun(startDeps, input, { workflowId: workflowIdOf(input) });
    },

    /** One model call (or the extractive answer); with a stream turn id, fragments are published as they arrive. */
    generateAnswer(input: AgentRunInput, ctx: RunContext, transcript: ToolTurn[] = []): Promise<GeneratedAnswer> {
      return generateAnswer(deps, input, ctx, transcript);
    },

    /**
     * Records the outcome: the run row, its one charge, and a message run's answer in the transcript. `turnOutcome`:
     * a chat turn that ends with this failure, announced with it (lib/streams).
     */
    finishRun(input: {
      run: AgentRunInput;
      status: 'done' | 'failed';
      answer?: GeneratedAnswer;
      errorCode?: string;
      error?: string;
      creditWeight?: number;
      /** What the run read: its context's passages and what it searched with (kept with the run, `readOf`). */
      read?: Pick<RunContext, 'passages' | 'searchedWith'>;
      turnOutcome?: TurnResult;
    }): Promise<void> {
      const { turnOutcome, ...rest } = input;
      return finishRun(deps.db, {
        ...rest,
        read: input.read && readOf(input.read),
        ...(turnOutcome ? { announcement: outcomeNotice(input.run.runId, turnOutcome) } : {}),
      });
    },

    /** A run that failed before it could start (a poll that could not fetch its address): recorded for the log. */
    recordSkippedOrFailedRun(input: {
      runId: string;
      botId: string;
      workspaceId: string;
      triggerKind: string;
      triggerId: string;
      status: 'failed';
      errorCode: string;
      error: string;
    }): Promise<void> {
      return recordFailedBeforeStart(deps.db, { ...input, workflowId: workflowIdOf(input) });
    },

    /**
     * A whole chat turn in one local activity (docs/decisions/005-chat-turn-local-activity.md): the visitor
     * message joins the transcript, the run is recorded, the model answers, the answer is stored. Every write is
     * idempotent on ids chosen by the workflow, so a retry after a crash repeats nothing. A backend failure is
     * recorded on the run and returned as a value: the turn has an answer for the visitor either way.
     */
    answerMessage(input: { visitor: TransitionInput; run: AgentRunInput }): Promise<MessageTurnOutcome> {
      return answerChatTurn(deps, startDeps, input);
    },
  };
}

/** What startRun needs of the deps: the run's tools (its agent's actions) and warnings in the activity's log. */
function startDepsOf(deps: AgentRunDeps) {
  return {
    db: deps.db,
    retrieve: deps.retrieve,
    toolsFor: (input: AgentRunInput) => toolsFor(deps.db, input),
    models: deps.models,
    llm: deps.llm,
    defaultModel: deps.defaultModel,
    warn: (message: string, meta: Record<string, unknown>) => {
      try {
        Context.current().log.warn(message, meta);
      } catch {
        // Not inside an activity: nothing to attach the line to.
      }
    },
  };
}

type StartDeps = ReturnType<typeof startDepsOf>;

/** The chat turn of `answerMessage` (see there). */
async function answerChatTurn(
  deps: AgentRunDeps,
  startDeps: StartDeps,
  input: { visitor: TransitionInput; run: AgentRunInput },
): Promise<MessageTurnOutcome> {
  const message = input.visitor.messages[0];
  const simple = !input.visitor.event && !input.visitor.status && input.visitor.messages.length === 1;
  const stored = <T>(write: () => Promise<T>) => retrying(deps.storageRetryMs ?? 0, write);
  // The common turn records its visitor message inside startRun's statement; anything else goes the long way.
  if (!simple) await stored(() => applyTransition(deps.db, input.visitor));
  // The turn's stream is claimed by startRun's statement: one round trip fewer before the model is asked. A turn
  // that ends before streaming (answered already, no credits) leaves the claim unused.
  const stream = input.run.streamTurnId ? { turnId: input.run.streamTurnId, owner: randomUUID() } : undefined;
  // Without a model there is nothing to cache: extractive answers are computed afresh.
  const question = deps.llm ? questionKey(input.run.input, input.run.pageContext) : undefined;
  try {
    const ctx = await stored(() =>
      startRun(startDeps, input.run, {
        workflowId: workflowIdOf(input.run),
        visitor: simple
          ? {
              id: message.id,
              text: message.text,
              at: message.at,
              user: input.visitor.user,
              userConfirmed: input.visitor.userConfirmed,
            }
          : undefined,
        flushedByFinish: true,
        questionKey: question,
        stream,
      }),
    );
    const opened = ctx.stream ? deps.deltas.adopt(ctx.stream) : undefined;
    // A retry of a turn whose answer was already stored (the worker died before reporting it) repeats nothing.
    if (ctx.finished) return ctx.finished;
    // The same question with the same knowledge, settings, model, page and conversation: no model call.
    const key = deps.llm
      ? cacheKey({
          knowledgeVersion: ctx.knowledgeVersion,
          model: ctx.model ?? deps.defaultModel,
          instructions: ctx.instructions,
          question: input.run.input,
          pageContext: input.run.pageContext,
          history: ctx.history,
        })
      : undefined;
    // Looked up only when startRun saw an entry for this question (most questions are new).
    const cached = key && ctx.mayBeCached ? await stored(() => cachedAnswer(deps.db, input.run.botId, key)) : null;
    // A follow-up's standalone question (lib/runs/question.ts) is part of the run's usage, cached answer or not.
    const answer = withSearchUsage(
      cached
        ? await replayCached(deps, input.run, cached, opened)
        : await generateAnswer(deps, input.run, ctx, [], { stream: opened, callerEndsStream: true }),
      ctx,
    );
    const announcement = announcementOf(input.run, 'done', answer);
    if (opened && !cached) {
      // An answer announced at commit carries its whole text, and the API shows what the fragments did not: its
      // stream's last fragments need no statement of their own. finishRun then stores nothing if another attempt
      // took the stream over. An answer that is not announced (handed over, too long) ends its stream first.
      if (announcement !== null) opened.drop();
      else await opened.finish();
    }
    await stored(() =>
      finishRun(deps.db, {
        run: input.run,
        status: 'done',
        answer,
        // An answer that hands over or offers a person is about this moment, not the question: never cached.
        cacheKey: cached || answer.unanswered ? undefined : key,
        questionKey: question,
        creditWeight: ctx.creditWeight,
        stream: ctx.stream,
        announcement,
        read: readOf(ctx),
      }),
    );
    return {
      answer: answer.text,
      ...(answer.sources ? { sources: answer.sources } : {}),
      ...(answer.unanswered ? { unanswered: answer.unanswered } : {}),
    };
  } catch (err) {
    return failedTurn(deps.db, input.run, err, stored);
  }
}

/**
 * A chat turn that failed: a backend failure the visitor is told about is recorded on the run, announced with its
 * record (lib/announcements.ts) as an answer would be, and returned as a value — the turn has an outcome either way.
 * Anything else fails the activity (and is retried).
 */
async function failedTurn(
  db: Db,
  run: AgentRunInput,
  err: unknown,
  stored: <T>(write: () => Promise<T>) => Promise<T>,
): Promise<MessageTurnOutcome> {
  const failure = failureInfo(err);
  if (!TOLD_TO_VISITOR.has(failure.type)) throw err;
  const announcement = outcomeNotice(run.runId, { answer: '', error: failure });
  // A run refused for lack of credits was recorded as such by startRun: only its announcement is left to send.
  if (failure.type === 'no_credits') await stored(() => announce(db, announcement));
  else {
    await stored(() =>
      finishRun(db, { run, status: 'failed', errorCode: failure.type, error: failure.message, announcement }),
    );
  }
  return { failure };
}

export type AgentRunActivities = ReturnType<typeof createAgentRunActivities>;
