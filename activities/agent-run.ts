import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../lib/db';
import { LlmError, type ChatMessage, type Llm } from '../lib/llm';
import type { DeltaPublisher } from '../lib/streams';
import { type AgentRunInput, runWorkflowId } from '../workflows/messages';
import type { TransitionInput } from './conversation';

export interface Passage {
  sourceId: string;
  title: string;
  text: string;
  score: number;
}

export interface AgentRunDeps {
  db: Db;
  /** Null when no LLM is configured: answers are then extractive (DESIGN.md). */
  llm: Llm | null;
  defaultModel: string;
  retrieve: (botId: string, query: string) => Promise<Passage[]>;
  deltas: DeltaPublisher;
}

export interface RunContext {
  botName: string;
  instructions: string;
  model: string | null;
  passages: Passage[];
  history: { author: string; text: string }[];
}

export interface GeneratedAnswer {
  text: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}

const HISTORY_MESSAGES = 12;
const PASSAGE_CHARS = 1_500;

/** Platform rules every agent gets before its own instructions. */
const PLATFORM_RULES = [
  'You are an assistant embedded on a website, answering its visitors.',
  'Use the knowledge passages below when they are relevant; do not invent facts that are not in them.',
  "If the passages do not cover the question, say so briefly and offer what you can.",
  'Answer in the language of the visitor.',
].join(' ');

/** Credits charged for a run (README, Credits): one per run plus one per started 1 000 tokens. */
export function creditsFor(promptTokens: number, completionTokens: number): number {
  return 1 + Math.ceil((promptTokens + completionTokens) / 1000);
}

export function buildPrompt(input: Pick<AgentRunInput, 'input' | 'pageContext'>, ctx: RunContext): ChatMessage[] {
  const knowledge = ctx.passages.length
    ? ctx.passages.map((p, i) => `[${i + 1}] ${p.title ? `${p.title}: ` : ''}${p.text.slice(0, PASSAGE_CHARS)}`).join('\n\n')
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

/** Without an LLM, the answer is the best-matching passages, stated as such (a real, documented mode). */
export function extractiveAnswer(passages: Passage[]): string {
  if (!passages.length) {
    return "I couldn't find anything about that in this site's knowledge base. (No AI model is configured, so I can only quote what the knowledge base says.)";
  }
  const quoted = passages.slice(0, 3).map((p) => `• ${p.title ? `${p.title}: ` : ''}${p.text.slice(0, 600).trim()}`);
  return `Here is what the knowledge base says about this:\n\n${quoted.join('\n\n')}`;
}

function* chunkWords(text: string, size = 4): Generator<string> {
  const words = text.split(/(?<=\s)/);
  for (let i = 0; i < words.length; i += size) yield words.slice(i, i + size).join('');
}

export interface MessageTurnOutcome {
  answer?: string;
  failure?: { code: 'llm_unavailable' | 'llm_overloaded'; message: string; retryAfter?: number };
}

export function createAgentRunActivities(deps: AgentRunDeps, conversation: { applyTransition(t: TransitionInput): Promise<unknown> }) {
  const activities = {
    /** Records the run as started, and gathers what the model needs: the agent, knowledge and recent history. */
    async startRun(input: AgentRunInput): Promise<RunContext> {
      await deps.db.query(
        `INSERT INTO runs (id, bot_id, workspace_id, trigger_kind, trigger_id, session_id, workflow_id, status, input)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8) ON CONFLICT (id) DO NOTHING`,
        [
          input.runId,
          input.botId,
          input.workspaceId,
          input.triggerKind,
          input.triggerId ?? null,
          input.sessionId ?? null,
          Context.current().info.workflowExecution?.workflowId ?? runWorkflowId(input.runId),
          input.input,
        ],
      );
      // Spec, What the service does: every run is accounted in credits; with none left there is no free work.
      const balance = await deps.db.query<{ credit_balance: number }>(`SELECT credit_balance FROM workspaces WHERE id = $1`, [input.workspaceId]);
      if ((balance.rows[0]?.credit_balance ?? 0) <= 0) {
        const message = 'The workspace has no credits left; add credits to wake this agent again';
        await deps.db.query(`UPDATE runs SET status = 'failed', error_code = 'no_credits', error = $2, finished_at = now() WHERE id = $1`, [input.runId, message]);
        throw ApplicationFailure.nonRetryable(message, 'no_credits');
      }
      const [bot, passages, history] = await Promise.all([
        deps.db.query<{ name: string; instructions: string; model: string | null }>(`SELECT name, instructions, model FROM bots WHERE id = $1`, [input.botId]),
        deps.retrieve(input.botId, input.input),
        input.sessionId
          ? deps.db.query<{ author: string; text: string }>(
              `SELECT author, text FROM (
                 SELECT seq, author, text FROM messages
                  WHERE session_id = $1 AND author IN ('visitor', 'bot', 'operator') AND ($2::text IS NULL OR id <> $2)
                  ORDER BY seq DESC LIMIT ${HISTORY_MESSAGES}) m ORDER BY seq`,
              [input.sessionId, input.messageId ?? null],
            )
          : Promise.resolve({ rows: [] as { author: string; text: string }[] }),
      ]);
      if (!bot.rows[0]) throw ApplicationFailure.nonRetryable(`Bot ${input.botId} no longer exists`, 'bot_not_found');
      return { botName: bot.rows[0].name, instructions: bot.rows[0].instructions, model: bot.rows[0].model, passages, history: history.rows };
    },

    /**
     * The LLM call (or the extractive answer). With a stream turn id, fragments are published as they arrive;
     * the attempt key lets the API tell a retried attempt's fragments from the first one's.
     */
    async generateAnswer(input: AgentRunInput, ctx: RunContext): Promise<GeneratedAnswer> {
      const info = Context.current().info;
      const attemptKey = `${info.activityId}:${info.attempt}`;
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
          messages: buildPrompt(input, ctx),
          // A little under the activity's own limit, so the backend's timeout is what gets reported.
          timeoutMs: Math.max(500, input.turnTimeoutMs - 300),
          onDelta,
        });
        return { text: result.text, model: result.model, promptTokens: result.promptTokens, completionTokens: result.completionTokens };
      } catch (err) {
        if (err instanceof LlmError) {
          // Retrying here cannot help the visitor who is waiting: the spec's 503 codes tell the client what to do.
          throw ApplicationFailure.create({
            message: err.message,
            type: err.kind,
            nonRetryable: true,
            details: [{ retryAfter: err.retryAfterSeconds }],
          });
        }
        throw err;
      } finally {
        if (input.streamTurnId) await deps.deltas.flush(input.streamTurnId);
      }
    },

    /** Records the outcome; for a message run, the bot's answer joins the transcript (idempotent on the run id). */
    async finishRun(input: {
      run: AgentRunInput;
      status: 'done' | 'failed';
      answer?: GeneratedAnswer;
      errorCode?: string;
      error?: string;
    }): Promise<void> {
      const { run, answer } = input;
      const client = await deps.db.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          `UPDATE runs SET status = $2, answer = $3, error_code = $4, error = $5, model = $6,
                  prompt_tokens = $7, completion_tokens = $8, credits = $9, finished_at = now()
            WHERE id = $1`,
          [
            run.runId,
            input.status,
            answer?.text ?? null,
            input.errorCode ?? null,
            input.error ?? null,
            answer?.model ?? null,
            answer?.promptTokens ?? 0,
            answer?.completionTokens ?? 0,
            input.status === 'done' ? creditsFor(answer?.promptTokens ?? 0, answer?.completionTokens ?? 0) : 0,
          ],
        );
        if (input.status === 'done') {
          // One charge per run: the ledger's unique run_id makes a retried finish charge nothing more.
          const credits = creditsFor(answer?.promptTokens ?? 0, answer?.completionTokens ?? 0);
          const charged = await client.query(
            `INSERT INTO credit_ledger (workspace_id, amount, reason, run_id) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING`,
            [run.workspaceId, -credits, `run ${run.triggerKind}`, run.runId],
          );
          if (charged.rowCount) await client.query(`UPDATE workspaces SET credit_balance = credit_balance - $2 WHERE id = $1`, [run.workspaceId, credits]);
        }
        if (input.status === 'done' && run.sessionId && answer) {
          const at = Date.now();
          await client.query(
            `INSERT INTO messages (id, session_id, bot_id, author, text, at) VALUES ($1, $2, $3, 'bot', $4, $5)
             ON CONFLICT (id) DO NOTHING`,
            [`msg_${run.runId.slice(4)}`, run.sessionId, run.botId, answer.text, at],
          );
          await client.query(`UPDATE conversations SET last_message_at = now() WHERE session_id = $1`, [run.sessionId]);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },

    /** A run that failed before it could start (a poll that could not fetch its address): recorded for the log. */
    async recordSkippedOrFailedRun(input: {
      runId: string;
      botId: string;
      workspaceId: string;
      triggerKind: string;
      triggerId: string;
      status: 'failed';
      errorCode: string;
      error: string;
    }): Promise<void> {
      await deps.db.query(
        `INSERT INTO runs (id, bot_id, workspace_id, trigger_kind, trigger_id, workflow_id, status, input, error_code, error, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'failed', '', $7, $8, now()) ON CONFLICT (id) DO NOTHING`,
        [
          input.runId,
          input.botId,
          input.workspaceId,
          input.triggerKind,
          input.triggerId,
          Context.current().info.workflowExecution?.workflowId ?? runWorkflowId(input.runId),
          input.errorCode,
          input.error,
        ],
      );
    },

    /**
     * A whole chat turn in one local activity (docs/decisions.md, "A chat turn is one local activity"): the visitor
     * message joins the transcript, the run is recorded, the model answers, the answer is stored. Every write is
     * idempotent on ids chosen by the workflow, so a retry after a crash repeats nothing. A backend failure is
     * recorded on the run and returned as a value: the turn has an answer for the visitor either way.
     */
    async answerMessage(input: { visitor: TransitionInput; run: AgentRunInput }): Promise<MessageTurnOutcome> {
      await conversation.applyTransition(input.visitor);
      try {
        const ctx = await activities.startRun(input.run);
        const answer = await activities.generateAnswer(input.run, ctx);
        await activities.finishRun({ run: input.run, status: 'done', answer });
        return { answer: answer.text };
      } catch (err) {
        const failure = err as { type?: string; message: string; details?: { retryAfter?: number }[] };
        // No credits left is a funds problem for the visitor's client: llm_unavailable (retrying is pointless).
        if (failure.type === 'no_credits') return { failure: { code: 'llm_unavailable', message: failure.message } };
        if (failure.type !== 'llm_unavailable' && failure.type !== 'llm_overloaded') throw err;
        await activities.finishRun({ run: input.run, status: 'failed', errorCode: failure.type, error: failure.message });
        return { failure: { code: failure.type, message: failure.message, retryAfter: failure.details?.[0]?.retryAfter } };
      }
    },
  };
  return activities;
}

export type AgentRunActivities = ReturnType<typeof createAgentRunActivities>;
