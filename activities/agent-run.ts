import { ApplicationFailure, Context } from '@temporalio/activity';
import { type Db, preparedStatement } from '../lib/db';
import { LlmError, type ChatMessage, type Llm } from '../lib/llm';
import { DELTA_CHANNEL, type DeltaPublisher, answerNotice } from '../lib/streams';
import { type AgentRunInput, type ToolCall, type ToolSpec, type ToolTurn, runWorkflowId } from '../workflows/messages';
import type { SafeFetch } from '../lib/http/safe-fetch';
import { readState, writeState } from '../lib/state';
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
  fetch: SafeFetch;
}

export interface RunContext {
  botName: string;
  instructions: string;
  model: string | null;
  passages: Passage[];
  history: { author: string; text: string }[];
  tools: ToolSpec[];
  /** Set when an earlier attempt of this run already finished (a retried turn): its answer, not a new one. */
  finished?: { answer: string };
}

export interface GeneratedAnswer {
  text: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  toolCalls?: ToolCall[];
}

const STATE_TOOLS: ToolSpec[] = [
  {
    name: 'read_state',
    description: "Reads the agent's state document (JSON) and its version. Use it to remember things between runs, e.g. processed markers.",
    parameters: { type: 'object', properties: {} },
    kind: 'state_read',
    requiresApproval: false,
  },
  {
    name: 'write_state',
    description: 'Replaces the state document. Pass the version you read; if it changed meanwhile the write fails and you must read again.',
    parameters: {
      type: 'object',
      properties: { document: { type: 'object' }, version: { type: 'integer' } },
      required: ['document', 'version'],
    },
    kind: 'state_write',
    requiresApproval: false,
  },
];

/** Tool results given back to the model are cut to this many characters. */
const TOOL_RESULT_CHARS = 8_000;

const HISTORY_MESSAGES = 12;
const PASSAGE_CHARS = 1_500;

// The statements of every run, prepared once per connection (lib/db.ts, preparedStatement).

/**
 * The start of a run in one statement: the visitor message of a chat turn (if any) joins the transcript, the run is
 * recorded, and the agent, its workspace's credit balance and any earlier attempt's outcome are read.
 */
const START_RUN = preparedStatement(
  'start-run',
  `WITH vm AS (INSERT INTO messages (id, session_id, bot_id, author, text, at)
                SELECT $9, $6, $2, 'visitor', $10, $11 WHERE $9::text IS NOT NULL ON CONFLICT (id) DO NOTHING RETURNING 1),
         vc AS (UPDATE conversations SET visitor_user = COALESCE($12, visitor_user), last_message_at = now()
                 WHERE $9::text IS NOT NULL AND session_id = $6 RETURNING 1),
         r AS (INSERT INTO runs (id, bot_id, workspace_id, trigger_kind, trigger_id, session_id, workflow_id, status, input)
               VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8) ON CONFLICT (id) DO NOTHING RETURNING 1),
         -- Inside a whole-turn activity ($13), no wait for this commit's WAL flush: the activity's last write
         -- (finishRun) is a synchronous commit and flushes this one with it; if Postgres lost it before then,
         -- the activity fails and its retry redoes it. A run's separate startRun activity always waits.
         relaxed AS (SELECT set_config('synchronous_commit', CASE WHEN $13::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true))
    SELECT b.name, b.instructions, b.model, w.credit_balance, prev.status AS run_status, prev.answer AS run_answer
      FROM bots b JOIN workspaces w ON w.id = b.workspace_id CROSS JOIN relaxed LEFT JOIN runs prev ON prev.id = $1
     WHERE b.id = $2`,
);

/** The conversation's last messages before this turn's, oldest first. */
const RECENT_HISTORY = preparedStatement(
  'recent-history',
  `SELECT author, text FROM (
    SELECT seq, author, text FROM messages
     WHERE session_id = $1 AND author IN ('visitor', 'bot', 'operator') AND ($2::text IS NULL OR id <> $2)
     ORDER BY seq DESC LIMIT ${HISTORY_MESSAGES}) m ORDER BY seq`,
);

/** The outcome of a run in one statement (see finishRun). */
const FINISH_RUN = preparedStatement(
  'finish-run',
  `WITH r AS (UPDATE runs SET status = $2, answer = $3, error_code = $4, error = $5, model = $6, prompt_tokens = $7,
                      completion_tokens = $8, credits = $9, finished_at = now() WHERE id = $1 RETURNING 1),
         l AS (INSERT INTO credit_ledger (workspace_id, amount, reason, run_id)
               SELECT $10, -$9::int, $11, $1 WHERE $2::text = 'done' ON CONFLICT (run_id) DO NOTHING RETURNING amount),
         w AS (UPDATE workspaces SET credit_balance = credit_balance + l.amount FROM l WHERE workspaces.id = $10 RETURNING 1),
         m AS (INSERT INTO messages (id, session_id, bot_id, author, text, at)
               SELECT $12, $13, $14, 'bot', $3, $15 WHERE $2::text = 'done' AND $13::text IS NOT NULL
               ON CONFLICT (id) DO NOTHING RETURNING 1),
         c AS (UPDATE conversations SET last_message_at = now() WHERE $2::text = 'done' AND session_id = $13 RETURNING 1)
    SELECT pg_notify('${DELTA_CHANNEL}', $16) WHERE $16::text IS NOT NULL`,
);

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
  /**
   * The tools a run may use (spec, agent actions): admin-only actions only for a confirmed admin visitor or the
   * owner's own runs; the state only in the owner's runs.
   */
  async function toolsFor(input: AgentRunInput): Promise<ToolSpec[]> {
    const admin = input.ownerContext === true || input.role === 'admin';
    const res = await deps.db.query<{ id: string; name: string; description: string; parameters: Record<string, unknown>; requires_approval: boolean }>(
      `SELECT id, name, description, parameters, requires_approval FROM bot_actions WHERE bot_id = $1 AND (NOT admin_only OR $2) ORDER BY name`,
      [input.botId, admin],
    );
    const actions: ToolSpec[] = res.rows.map((a) => ({
      name: a.name,
      description: a.description,
      parameters: a.parameters,
      kind: 'action',
      actionId: a.id,
      requiresApproval: a.requires_approval,
    }));
    return input.ownerContext ? [...actions, ...STATE_TOOLS] : actions;
  }

  const activities = {
    /** Records the run as started, and gathers what the model needs: the agent, knowledge and recent history. */
    async startRun(
      input: AgentRunInput,
      visitor?: { id: string; text: string; at: number; user?: string },
      opts: { flushedByFinish?: boolean } = {},
    ): Promise<RunContext> {
      // One round trip writes: the visitor message of a chat turn (if any) joins the transcript, the run is
      // recorded, and the agent, its workspace's credit balance and any earlier attempt's outcome are read. Each
      // write is idempotent on its id. The knowledge and history reads do not depend on it and run beside it.
      const [started, passages, history, tools] = await Promise.all([
        deps.db.query<{ name: string; instructions: string; model: string | null; credit_balance: number; run_status: string | null; run_answer: string | null }>(
          START_RUN([
            input.runId,
            input.botId,
            input.workspaceId,
            input.triggerKind,
            input.triggerId ?? null,
            input.sessionId ?? null,
            Context.current().info.workflowExecution?.workflowId ?? runWorkflowId(input.runId),
            input.input,
            visitor?.id ?? null,
            visitor?.text ?? null,
            visitor?.at ?? null,
            visitor?.user ?? null,
            opts.flushedByFinish === true,
          ]),
        ),
        deps.retrieve(input.botId, input.input),
        input.sessionId
          ? deps.db.query<{ author: string; text: string }>(RECENT_HISTORY([input.sessionId, input.messageId ?? null]))
          : Promise.resolve({ rows: [] as { author: string; text: string }[] }),
        input.withTools ? toolsFor(input) : Promise.resolve([] as ToolSpec[]),
      ]);
      const bot = started.rows[0];
      if (!bot) throw ApplicationFailure.nonRetryable(`Bot ${input.botId} no longer exists`, 'bot_not_found');
      // The statement sees the database as it was before its own writes: a run row here was written by an earlier
      // attempt. One that already finished keeps its answer (the visitor may have read it).
      const finished = bot.run_status === 'done' ? { answer: bot.run_answer ?? '' } : undefined;
      // Spec, What the service does: every run is accounted in credits; with none left there is no free work.
      if (!finished && bot.credit_balance <= 0) {
        const message = 'The workspace has no credits left; add credits to wake this agent again';
        await deps.db.query(`UPDATE runs SET status = 'failed', error_code = 'no_credits', error = $2, finished_at = now() WHERE id = $1`, [input.runId, message]);
        throw ApplicationFailure.nonRetryable(message, 'no_credits');
      }
      return { botName: bot.name, instructions: bot.instructions, model: bot.model, passages, history: history.rows, tools, ...(finished ? { finished } : {}) };
    },

    /**
     * The LLM call (or the extractive answer). With a stream turn id, fragments are published as they arrive;
     * the attempt key lets the API tell a retried attempt's fragments from the first one's.
     */
    async generateAnswer(input: AgentRunInput, ctx: RunContext, transcript: ToolTurn[] = []): Promise<GeneratedAnswer> {
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
        const followUps: ChatMessage[] = transcript.map((t) =>
          t.role === 'assistant'
            ? {
                role: 'assistant',
                content: t.text || null,
                tool_calls: t.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
              }
            : { role: 'tool', tool_call_id: t.toolCallId, content: t.content },
        );
        const result = await deps.llm.complete({
          model: ctx.model ?? deps.defaultModel,
          messages: [...buildPrompt(input, ctx), ...followUps],
          tools: ctx.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })),
          // A little under the activity's own limit, so the backend's timeout is what gets reported.
          timeoutMs: Math.max(500, input.turnTimeoutMs - 300),
          onDelta,
        });
        return {
          text: result.text,
          model: result.model,
          promptTokens: result.promptTokens,
          completionTokens: result.completionTokens,
          ...(result.toolCalls.length ? { toolCalls: result.toolCalls } : {}),
        };
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

    /**
     * Records the outcome in one statement: the run row, its one charge (the ledger's unique run_id makes a retried
     * finish charge nothing more) and the balance, and for a message run the bot's answer in the transcript and
     * its announcement to the waiting API (delivered at commit).
     */
    async finishRun(input: {
      run: AgentRunInput;
      status: 'done' | 'failed';
      answer?: GeneratedAnswer;
      errorCode?: string;
      error?: string;
    }): Promise<void> {
      const { run, answer } = input;
      const credits = input.status === 'done' ? creditsFor(answer?.promptTokens ?? 0, answer?.completionTokens ?? 0) : 0;
      await deps.db.query(
        FINISH_RUN([
          run.runId,
          input.status,
          answer?.text ?? null,
          input.errorCode ?? null,
          input.error ?? null,
          answer?.model ?? null,
          answer?.promptTokens ?? 0,
          answer?.completionTokens ?? 0,
          credits,
          run.workspaceId,
          `run ${run.triggerKind}`,
          `msg_${run.runId.slice(4)}`,
          run.sessionId ?? null,
          run.botId,
          Date.now(),
          // A message run's answer is announced at commit to the API process waiting for the turn (lib/streams).
          input.status === 'done' && run.sessionId ? answerNotice(run.runId, answer?.text ?? '') : null,
        ]),
      );
    },

    /**
     * Runs one tool call: an HTTP action through the SSRF-safe client, or a read or write of the agent state. The
     * result (or the failure, in words) goes back to the model; only storage trouble fails the activity.
     */
    async executeTool(input: { botId: string; tool: ToolSpec; arguments: string }): Promise<string> {
      let args: Record<string, unknown> = {};
      try {
        args = input.arguments ? (JSON.parse(input.arguments) as Record<string, unknown>) : {};
      } catch {
        return 'error: the arguments were not valid JSON';
      }
      if (input.tool.kind === 'state_read') return JSON.stringify(await readState(deps.db, input.botId));
      if (input.tool.kind === 'state_write') {
        try {
          const written = await writeState(deps.db, input.botId, (args.document ?? {}) as Record<string, unknown>, Number(args.version ?? 0));
          return JSON.stringify({ ok: true, version: written.version });
        } catch (err) {
          return `error: ${(err as Error).message}`;
        }
      }
      const action = await deps.db.query<{ method: string; url: string }>(`SELECT method, url FROM bot_actions WHERE id = $1 AND bot_id = $2`, [
        input.tool.actionId,
        input.botId,
      ]);
      const a = action.rows[0];
      if (!a) return 'error: this action no longer exists';
      try {
        const url = new URL(a.url);
        if (a.method === 'GET' || a.method === 'DELETE') for (const [k, v] of Object.entries(args)) url.searchParams.set(k, String(v));
        const res = await deps.fetch(url.toString(), {
          method: a.method,
          headers: { 'Content-Type': 'application/json', 'User-Agent': 'AgentPlatform-Actions/1' },
          ...(a.method === 'GET' || a.method === 'DELETE' ? {} : { body: JSON.stringify(args) }),
          timeoutMs: 15_000,
          maxBytes: 256 * 1024,
        });
        return `HTTP ${res.status}\n${res.body.toString('utf8').slice(0, TOOL_RESULT_CHARS)}`;
      } catch (err) {
        return `error: ${(err as { code?: string }).code ?? 'failed'}: ${(err as Error).message}`;
      }
    },

    /** Records an action call waiting for the owner, and tells the owner (a notification). Idempotent on its id. */
    async requestApproval(input: { approvalId: string; runId: string; botId: string; tool: ToolSpec; arguments: string; workflowId: string }): Promise<void> {
      const inserted = await deps.db.query<{ workspace_id: string; bot_name: string }>(
        `WITH a AS (INSERT INTO action_approvals (id, run_id, bot_id, action_id, arguments, workflow_id) VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (id) DO NOTHING RETURNING bot_id)
         SELECT b.workspace_id, b.name AS bot_name FROM a JOIN bots b ON b.id = a.bot_id`,
        [input.approvalId, input.runId, input.botId, input.tool.actionId, input.arguments || '{}', input.workflowId],
      );
      const row = inserted.rows[0];
      if (!row) return;
      await deps.db.query(
        `INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data) VALUES ($1, $2, $3, 'approval_requested', $4, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [
          `ntf_${input.approvalId}`,
          row.workspace_id,
          input.botId,
          `${row.bot_name} asks to run "${input.tool.name}"`,
          `The action waits for your approval. Arguments: ${(input.arguments || '{}').slice(0, 500)}`,
          JSON.stringify({ approval_id: input.approvalId, run_id: input.runId, action: input.tool.name }),
        ],
      );
    },

    /** After an approved action ran for a chat turn: its outcome joins the conversation as a bot message. */
    async postActionOutcome(input: { sessionId: string; botId: string; messageId: string; text: string }): Promise<void> {
      await deps.db.query(
        `INSERT INTO messages (id, session_id, bot_id, author, text, at) VALUES ($1, $2, $3, 'bot', $4, $5) ON CONFLICT (id) DO NOTHING`,
        [input.messageId, input.sessionId, input.botId, input.text, Date.now()],
      );
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
      const message = input.visitor.messages[0];
      const simple = !input.visitor.event && !input.visitor.status && input.visitor.messages.length === 1;
      // The common turn records its visitor message inside startRun's statement; anything else goes the long way.
      if (!simple) await conversation.applyTransition(input.visitor);
      try {
        const ctx = await activities.startRun(input.run, simple ? { id: message.id, text: message.text, at: message.at, user: input.visitor.user } : undefined, {
          flushedByFinish: true,
        });
        // A retry of a turn whose answer was already stored (the worker died before reporting it) repeats nothing.
        if (ctx.finished) return { answer: ctx.finished.answer };
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
