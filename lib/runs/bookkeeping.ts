import type { ModelCatalogue } from '../billing/models';
import { chargeShardSql, creditBalanceSql, creditsFor } from '../credits/service';
import { type Db, preparedStatement } from '../db';
import { LIMITS } from '../limits';
import { outcomeNotice } from '../announcements';
import { type Passage, type PassageView, passageView } from '../knowledge/retrieve';
import type { Llm } from '../llm';
import { DELTA_CHANNEL, type StreamClaim, StreamTakenOver, claimStreamSql } from '../streams/channel';
import { failure } from '../../workflows/failures';
import type {
  AgentRunInput,
  AnswerSource,
  GeneratedAnswer,
  ToolSpec,
  Unanswered,
  WhenUnanswered,
} from '../../workflows/contracts/agent-run';
import type { LimitSettings } from './limits';
import { PASSAGE_CHARS } from './prompt';
import { searchInContext } from './question';

/**
 * A run's record in Postgres from start to finish (contract, What the service does: every wake-up is a run accounted in
 * credits): the `runs` row, the visitor message and the bot's answer of a chat turn, and the one credit charge. The
 * statements of every run are prepared once per connection (lib/db.ts, preparedStatement); each write is
 * idempotent on ids chosen by the workflow, so a retried activity repeats nothing.
 */

/** The history a run sees: the conversation's last messages before this turn's. */
const HISTORY_MESSAGES = 12;

/** Everything a run's model call needs, gathered by `startRun`. */
export interface RunContext {
  botName: string;
  instructions: string;
  /**
   * The model this run uses: the agent's own if the workspace's plan allows it, else null (the platform's default;
   * lib/billing/models.ts, `resolve`).
   */
  model: string | null;
  /** That model's credit weight (the default's is 1): the run's tokens are charged times it. */
  creditWeight?: number;
  /** The bot's knowledge version when the run started (part of an answer-cache key). */
  knowledgeVersion: number;
  /** What the agent does with a question it cannot answer (lib/runs/limits.ts). */
  limits: LimitSettings;
  passages: Passage[];
  /**
   * What the knowledge was searched with when the visitor's message did not stand alone (lib/runs/question.ts): the
   * model's standalone question, or the recent messages' words. Absent: the message itself.
   */
  searchedWith?: string;
  /** The model's tokens for that standalone question: added to the run's usage, charged with it. */
  searchUsage?: { promptTokens: number; completionTokens: number };
  history: { author: string; text: string }[];
  tools: ToolSpec[];
  /** Some fresh answer-cache entry answers this question (`questionKey`): the full key is worth looking up. */
  mayBeCached: boolean;
  /** The turn's stream, claimed by this statement for this attempt when the turn streams (opts.stream). */
  stream?: StreamClaim;
  /** Set when an earlier attempt of this run already finished (a retried turn): its answer, not a new one. */
  finished?: { answer: string; sources?: AnswerSource[]; unanswered?: Unanswered };
}

/**
 * The start of a run in one statement: the visitor message of a chat turn (if any) joins the transcript, the run is
 * recorded, and the agent, its workspace's credit balance, any earlier attempt's outcome and the conversation's
 * recent history are read. The history is the conversation's last messages before this turn's (never the turn's own
 * message, $15): the statement's reads see the database as it was before its own insert.
 */
const START_RUN = preparedStatement(
  'start-run',
  `WITH vm AS (INSERT INTO messages (id, session_id, bot_id, author, text, at)
                SELECT $9, $6, $2, 'visitor', $10, $11 WHERE $9::text IS NOT NULL ON CONFLICT (id) DO NOTHING RETURNING 1),
         -- The user a visitor confirmation named ($19) is kept beside the latest one said (lib/conversations/views.ts).
         vc AS (UPDATE conversations SET visitor_user = COALESCE($12, visitor_user), last_message_at = now(),
                       visitor_confirmed_user = CASE WHEN $19::boolean THEN $12 ELSE visitor_confirmed_user END
                 WHERE $9::text IS NOT NULL AND session_id = $6 RETURNING 1),
         r AS (INSERT INTO runs (id, bot_id, workspace_id, trigger_kind, trigger_id, session_id, workflow_id, status, input)
               VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8) ON CONFLICT (id) DO NOTHING RETURNING 1),
         -- Inside a whole-turn activity ($13), no wait for this commit's WAL flush: the activity's last write
         -- (finishRun) is a synchronous commit and flushes this one with it; if Postgres lost it before then,
         -- the activity fails and its retry redoes it. A run's separate startRun activity always waits.
         -- A streamed chat turn claims its stream for this attempt here too (lib/streams/publisher.ts): one round trip fewer.
         claim AS (${claimStreamSql('$17::text', '$18::uuid', '0')}),
         relaxed AS (SELECT set_config('synchronous_commit', CASE WHEN $13::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true))
    SELECT b.name, b.instructions, b.model, b.knowledge_version, b.handoff_enabled, b.when_unanswered, w.plan, ${creditBalanceSql('w')} AS credit_balance, prev.status AS run_status,
           prev.answer AS run_answer, pm.sources AS run_sources, prev.unanswered AS run_unanswered,
           (SELECT COALESCE(json_agg(json_build_object('author', h.author, 'text', h.text) ORDER BY h.seq), '[]'::json)
              FROM (SELECT seq, author, text FROM messages
                     WHERE session_id = $6 AND author IN ('visitor', 'bot', 'operator') AND ($15::text IS NULL OR id <> $15)
                     ORDER BY seq DESC LIMIT ${HISTORY_MESSAGES}) h) AS history,
           EXISTS (SELECT 1 FROM knowledge_stats ks WHERE ks.bot_id = $2 AND ks.fragments > 0) AS has_knowledge,
           $16::bytea IS NOT NULL AND EXISTS (SELECT 1 FROM answer_cache ac
                                               WHERE ac.bot_id = $2 AND ac.question_key = $16 AND ac.expires_at > now()) AS may_be_cached,
           (SELECT json_build_object('text', text, 'len', len, 'step_start', step_start, 'complete', complete) FROM claim) AS stream_claim
      FROM bots b JOIN workspaces w ON w.id = b.workspace_id CROSS JOIN relaxed LEFT JOIN runs prev ON prev.id = $1
           LEFT JOIN messages pm ON pm.id = $14 AND prev.status = 'done'
     WHERE b.id = $2`,
);

/** The outcome of a run in one statement (see finishRun). */
const FINISH_RUN = preparedStatement(
  'finish-run',
  `-- A streamed turn's attempt writes only while it owns the turn's stream ($22, $23): one that another attempt took
   -- over stores nothing (lib/streams/publisher.ts, the fencing owner).
   WITH own AS (SELECT $22::text IS NULL OR NOT EXISTS (SELECT 1 FROM turn_streams WHERE turn_id = $22 AND owner <> $23::uuid) AS ok),
         r AS (UPDATE runs SET status = $2, answer = $3, error_code = $4, error = $5, model = $6, prompt_tokens = $7,
                      completion_tokens = $8, credits = $9, unanswered = $20, finished_at = now(),
                      passages = COALESCE($24::jsonb, passages), searched_with = COALESCE($25, searched_with)
                WHERE id = $1 AND (SELECT ok FROM own) RETURNING 1),
         l AS (INSERT INTO credit_ledger (workspace_id, amount, reason, run_id)
               SELECT $10, -$9::int, $11, $1 WHERE $2::text = 'done' AND (SELECT ok FROM own) ON CONFLICT (run_id) DO NOTHING RETURNING amount),
         -- The charge goes to one of the workspace's balance shards, not its row, which every turn would queue for.
         w AS (${chargeShardSql('$10', '$1', 'l')} RETURNING 1),
         m AS (INSERT INTO messages (id, session_id, bot_id, author, text, at, sources)
               SELECT $12, $13, $14, 'bot', $3, $15, $19::jsonb WHERE $2::text = 'done' AND $13::text IS NOT NULL AND (SELECT ok FROM own)
               ON CONFLICT (id) DO NOTHING RETURNING 1),
         c AS (UPDATE conversations SET last_message_at = now() WHERE $2::text = 'done' AND session_id = $13 AND (SELECT ok FROM own) RETURNING 1),
         ac AS (INSERT INTO answer_cache (bot_id, key, answer, model, run_id, expires_at, sources, question_key)
                SELECT $14, $17, $3, $6, $1, now() + make_interval(hours => $18), $19::jsonb, $21 WHERE $2::text = 'done' AND $17::bytea IS NOT NULL AND (SELECT ok FROM own)
                ON CONFLICT (bot_id, key) DO UPDATE
                  SET answer = EXCLUDED.answer, model = EXCLUDED.model, run_id = EXCLUDED.run_id, sources = EXCLUDED.sources,
                      question_key = EXCLUDED.question_key, created_at = now(), expires_at = EXCLUDED.expires_at
                RETURNING 1)
    SELECT (SELECT ok FROM own) AS owned, (SELECT pg_notify('${DELTA_CHANNEL}', $16) WHERE $16::text IS NOT NULL AND (SELECT ok FROM own)) AS notified`,
);

/** Credits charged for a run (README, Credits): lib/credits/service.ts, where every model use is priced. */
export { creditsFor };

/** The id of the bot's answer to a chat turn: derived from the run id, so a retried finish writes it once. */
export function answerMessageId(runId: string): string {
  return `msg_${runId.slice(4)}`;
}

export interface StartRunDeps {
  db: Db;
  retrieve: (botId: string, query: string) => Promise<Passage[]>;
  /** Writes a follow-up's standalone question (lib/runs/question.ts); null without a model. */
  llm: Llm | null;
  defaultModel: string;
  /** A warning for the run's log (the activity's logger). */
  warn?: (message: string, meta: Record<string, unknown>) => void;
  /** The tools this run may use (lib/actions/tools.ts). */
  toolsFor: (input: AgentRunInput) => Promise<ToolSpec[]>;
  /** Which models the workspace's plan allows, and their weights. */
  models: ModelCatalogue;
}

/**
 * Records the run as started and gathers what the model needs. One round trip writes (the visitor message of a
 * chat turn, the run row) and reads the agent, the credit balance, any earlier attempt's outcome and the recent
 * history; the knowledge read does not depend on it and runs beside it. Fails with `bot_not_found`, or `no_credits`
 * (contract: every run is accounted in credits; with none left there is no free work).
 */
export async function startRun(
  deps: StartRunDeps,
  input: AgentRunInput,
  opts: {
    workflowId: string;
    visitor?: { id: string; text: string; at: number; user?: string; userConfirmed?: boolean };
    flushedByFinish?: boolean;
    /** The turn's question key (lib/runs/answer-cache.ts), when it may be answered from the cache. */
    questionKey?: Buffer;
    /** A streamed chat turn's stream and this attempt's owner id: claimed in the same statement. */
    stream?: Pick<StreamClaim, 'turnId' | 'owner'>;
  },
): Promise<RunContext> {
  const { visitor } = opts;
  const [started, passages, tools] = await Promise.all([
    deps.db.query<{
      name: string;
      instructions: string;
      model: string | null;
      knowledge_version: number;
      has_knowledge: boolean;
      handoff_enabled: boolean;
      when_unanswered: WhenUnanswered;
      plan: string;
      credit_balance: number;
      run_status: string | null;
      run_answer: string | null;
      run_sources: AnswerSource[] | null;
      run_unanswered: Unanswered | null;
      history: { author: string; text: string }[];
      may_be_cached: boolean;
      stream_claim: StreamClaim['row'] | null;
    }>(
      START_RUN([
        input.runId,
        input.botId,
        input.workspaceId,
        input.triggerKind,
        input.triggerId ?? null,
        input.sessionId ?? null,
        opts.workflowId,
        input.input,
        visitor?.id ?? null,
        visitor?.text ?? null,
        visitor?.at ?? null,
        visitor?.user ?? null,
        opts.flushedByFinish === true,
        answerMessageId(input.runId),
        input.messageId ?? null,
        opts.questionKey ?? null,
        opts.stream?.turnId ?? null,
        opts.stream?.owner ?? null,
        visitor?.userConfirmed === true && visitor.user !== undefined,
      ]),
    ),
    deps.retrieve(input.botId, input.input),
    input.withTools ? deps.toolsFor(input) : Promise.resolve([] as ToolSpec[]),
  ]);
  const bot = started.rows[0];
  if (!bot) throw failure('bot_not_found', `Bot ${input.botId} no longer exists`);
  // The statement sees the database as it was before its own writes: a run row here was written by an earlier
  // attempt. One that already finished keeps its answer (the visitor may have read it).
  const finished =
    bot.run_status === 'done'
      ? {
          answer: bot.run_answer ?? '',
          ...(bot.run_sources ? { sources: bot.run_sources } : {}),
          ...(bot.run_unanswered ? { unanswered: bot.run_unanswered } : {}),
        }
      : undefined;
  if (!finished && bot.credit_balance <= 0) {
    const refused = failure('no_credits', 'The workspace has no credits left; add credits to wake this agent again');
    await deps.db.query(
      `UPDATE runs SET status = 'failed', error_code = $2, error = $3, finished_at = now() WHERE id = $1`,
      [input.runId, refused.type, refused.message],
    );
    throw refused;
  }
  // A model the plan no longer allows (a downgrade, a model taken out) falls back to the default.
  const model = deps.models.resolve(bot.model, bot.plan);
  // A chat turn's follow-up is searched with what the conversation is about (lib/runs/question.ts): after the
  // statement above, which read the history. A turn already answered searches nothing again, nor does an agent
  // without knowledge (its first search found nothing, and a second could not either).
  const searched =
    input.triggerKind === 'message' && !finished && bot.has_knowledge
      ? await searchInContext(
          { retrieve: deps.retrieve, llm: deps.llm },
          {
            botId: input.botId,
            message: input.input,
            history: bot.history,
            alone: passages,
            model: model ?? deps.defaultModel,
            turnTimeoutMs: input.turnTimeoutMs,
            limit: LIMITS.passagesPerTurn,
          },
          deps.warn,
        )
      : { passages };
  return {
    botName: bot.name,
    instructions: bot.instructions,
    model,
    creditWeight: deps.models.weightOf(model),
    knowledgeVersion: Number(bot.knowledge_version),
    limits: { handoffEnabled: bot.handoff_enabled, whenUnanswered: bot.when_unanswered },
    passages: searched.passages,
    ...(searched.searchedWith ? { searchedWith: searched.searchedWith } : {}),
    ...(searched.usage ? { searchUsage: searched.usage } : {}),
    history: bot.history,
    mayBeCached: bot.may_be_cached,
    ...(opts.stream && bot.stream_claim ? { stream: { ...opts.stream, row: bot.stream_claim } } : {}),
    tools,
    ...(finished ? { finished } : {}),
  };
}

/**
 * Records the outcome in one statement: the run row, its one charge (the ledger's unique run_id makes a retried
 * finish charge nothing more) and the balance, and for a message run the bot's answer in the transcript and its
 * announcement to the waiting API (delivered at commit).
 */
export async function finishRun(
  db: Db,
  input: {
    run: AgentRunInput;
    status: 'done' | 'failed';
    answer?: GeneratedAnswer;
    errorCode?: string;
    error?: string;
    /** A chat turn's answer-cache key: the answer is kept under it (lib/runs/answer-cache.ts). */
    cacheKey?: Buffer;
    /** Its question key, which tells a later turn's first statement that an entry may answer it. */
    questionKey?: Buffer;
    /** The run's model's credit weight (RunContext.creditWeight); 1 when absent. */
    creditWeight?: number;
    /** A streamed turn's stream and this attempt's owner id: nothing is stored once another attempt took it over. */
    stream?: Pick<StreamClaim, 'turnId' | 'owner'>;
    /** The answer's announcement, when the caller has computed it already (`announcementOf`). */
    announcement?: string | null;
    /** What the run read: its passages and what it searched with (`readOf`); kept with the run. */
    read?: RunRead;
  },
): Promise<void> {
  const { run, answer } = input;
  const credits =
    input.status === 'done'
      ? creditsFor(answer?.promptTokens ?? 0, answer?.completionTokens ?? 0, input.creditWeight ?? 1)
      : 0;
  const res = await db.query<{ owned: boolean }>(
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
      answerMessageId(run.runId),
      run.sessionId ?? null,
      run.botId,
      Date.now(),
      input.announcement !== undefined ? input.announcement : announcementOf(run, input.status, answer),
      input.cacheKey ?? null,
      LIMITS.answerCacheTtlHours,
      answer?.sources?.length ? JSON.stringify(answer.sources) : null,
      answer?.unanswered ?? null,
      input.cacheKey ? (input.questionKey ?? null) : null,
      input.stream?.turnId ?? null,
      input.stream?.owner ?? null,
      input.read ? JSON.stringify(input.read.passages) : null,
      input.read?.searchedWith ?? null,
    ]),
  );
  if (input.stream && !res.rows[0]?.owned) throw new StreamTakenOver(input.stream.turnId);
}

/** What a run read, as kept with it (docs/decisions/153-see-what-the-agent-reads.md). */
export interface RunRead {
  /** The passages its model was given, best first, each with the text the model read. */
  passages: PassageView[];
  searchedWith?: string;
}

/** The record of what a run read, from its context: the passages as given to the model. */
export function readOf(ctx: Pick<RunContext, 'passages' | 'searchedWith'>): RunRead {
  return {
    passages: ctx.passages.map((p) => passageView({ ...p, text: p.text.slice(0, PASSAGE_CHARS) })),
    ...(ctx.searchedWith ? { searchedWith: ctx.searchedWith } : {}),
  };
}

/** An answer with the tokens of the run's standalone question added (charged with the run's own). */
export function withSearchUsage(answer: GeneratedAnswer, ctx: Pick<RunContext, 'searchUsage'>): GeneratedAnswer {
  if (!ctx.searchUsage) return answer;
  return {
    ...answer,
    promptTokens: answer.promptTokens + ctx.searchUsage.promptTokens,
    completionTokens: answer.completionTokens + ctx.searchUsage.completionTokens,
  };
}

/**
 * How a message run's answer is announced at commit to the API process waiting for the turn (lib/streams), or null
 * when it is not: not an answer that hands the conversation over (its turn's outcome, the hand-over, is announced by
 * the transition that records it), nor a failure (its caller announces the failure the turn ends with).
 */
export function announcementOf(
  run: Pick<AgentRunInput, 'runId' | 'sessionId'>,
  status: 'done' | 'failed',
  answer: GeneratedAnswer | undefined,
): string | null {
  return status === 'done' && run.sessionId && answer?.unanswered !== 'hand_over'
    ? outcomeNotice(run.runId, {
        answer: answer?.text ?? '',
        ...(answer?.sources?.length ? { sources: answer.sources } : {}),
        ...(answer?.unanswered === 'offer' ? { handoffOffered: true as const } : {}),
      })
    : null;
}

/** A run that failed before it could start (a poll that could not fetch its address): recorded for the log. */
export async function recordFailedBeforeStart(
  db: Db,
  input: {
    runId: string;
    botId: string;
    workspaceId: string;
    triggerKind: string;
    triggerId: string;
    workflowId: string;
    errorCode: string;
    error: string;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO runs (id, bot_id, workspace_id, trigger_kind, trigger_id, workflow_id, status, input, error_code, error, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'failed', '', $7, $8, now()) ON CONFLICT (id) DO NOTHING`,
    [
      input.runId,
      input.botId,
      input.workspaceId,
      input.triggerKind,
      input.triggerId,
      input.workflowId,
      input.errorCode,
      input.error,
    ],
  );
}
