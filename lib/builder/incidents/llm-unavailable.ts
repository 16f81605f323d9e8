import type { Queryable } from '../../db';
import { type AgentFacts, type Incident, type LlmFailureReason, RECENT_DAYS, lastError, ms, quote } from './kinds';

interface LlmFailures {
  failed: number;
  since: Date | null;
  last_run_id: string | null;
  last_error: string | null;
}

/** The AI service refusing the agent (key, funds, model) since its last answered run, within the window. */
export async function readLlmFailures(db: Queryable, agentId: string): Promise<LlmFailures | undefined> {
  const res = await db.query<LlmFailures>(
    `SELECT count(*)::int AS failed, min(r.started_at) AS since,
            (array_agg(r.id ORDER BY r.started_at DESC, r.id DESC))[1] AS last_run_id,
            (array_agg(r.error ORDER BY r.started_at DESC, r.id DESC))[1] AS last_error
       FROM runs r
      WHERE r.bot_id = $1 AND r.status = 'failed' AND r.error_code = 'llm_unavailable'
        AND r.started_at > now() - make_interval(days => $2)
        AND r.started_at > COALESCE((SELECT max(ok.started_at) FROM runs ok WHERE ok.bot_id = $1 AND ok.status = 'done'), '-infinity')`,
    [agentId, RECENT_DAYS],
  );
  return res.rows[0];
}

/** The reason of an `llm_unavailable` run from the message lib/llm.ts (`classifyLlmError`) records with it. */
function llmFailureReason(error: string | null): LlmFailureReason {
  if (!error) return 'other';
  if (/refused the key|no funds/i.test(error)) return 'key_or_funds';
  if (/model does not exist/i.test(error)) return 'model_not_found';
  if (/rejected the request/i.test(error)) return 'request_rejected';
  return 'other';
}

/** `llm_unavailable`: runs failed so in 7 days, after the last `done` run; the reason from the last one's error. */
export function llmUnavailable(bot: AgentFacts, l: LlmFailures | undefined): Incident[] {
  if (!l || l.failed <= 0 || !l.last_run_id) return [];
  const reason = llmFailureReason(l.last_error);
  const model = bot.model ? `the model ${quote(bot.model)}` : "the platform's default model";
  const problems: Record<LlmFailureReason, string> = {
    key_or_funds: `The AI service refused the platform's key or its account has no funds left, so ${bot.name} cannot answer.`,
    model_not_found: `The AI service does not know ${model} that ${bot.name} is set to use, so it cannot answer.`,
    request_rejected: `The AI service rejected ${bot.name}'s requests, so it cannot answer.`,
    other: `The AI service is unavailable for ${bot.name}, so it cannot answer.`,
  };
  const fixes: Record<LlmFailureReason, string> = {
    key_or_funds:
      'Whoever runs this platform must renew its AI key or top up the AI account (retrying does not help). ' +
      'I cannot change that key.',
    model_not_found: 'Ask me to switch the agent to a model the AI service offers, or back to the default model.',
    request_rejected:
      "Check the error below; if the agent's model or instructions are the cause, ask me to change them.",
    other: 'Check the error below; whoever runs this platform may have to fix the AI settings.',
  };
  return [
    {
      kind: 'llm_unavailable',
      severity: 'blocking',
      problem: `${problems[reason]} ${l.failed} run(s) failed this way since its last answer.${lastError(l.last_error)}`,
      fix: fixes[reason],
      builder_can_fix: reason === 'model_not_found' || reason === 'request_rejected',
      since: ms(l.since),
      details: {
        reason,
        model: bot.model,
        failed_runs: l.failed,
        last_run_id: l.last_run_id,
        last_error: l.last_error,
      },
    },
  ];
}
