import { creditBalanceSql } from '../../credits/service';
import type { Queryable } from '../../db';
import { errors } from '../../errors';
import type { AgentFacts } from './kinds';

/**
 * The first of the tool's two round trips: the agent's row, with what `out_of_credits` and `knowledge_empty` judge
 * (the balance, the runs refused for lack of credits, the sources). Another workspace's agent is not found.
 */
export async function readAgent(db: Queryable, workspaceId: string, agentId: string): Promise<AgentFacts> {
  const res = await db.query<AgentFacts>(
    `SELECT b.name, b.model, b.handoff_webhook_url AS webhook_url, b.knowledge_version, b.created_at,
            (SELECT count(*) FROM knowledge_sources k WHERE k.bot_id = b.id)::int AS sources,
            ${creditBalanceSql('w')} AS balance, changed.at AS balance_changed_at,
            -- runs of this agent refused for lack of credits since the balance last changed
            (SELECT count(*) FROM runs r
              WHERE r.bot_id = b.id AND r.status = 'failed' AND r.error_code = 'no_credits' AND r.started_at >= changed.at
            )::int AS refused_runs
       FROM bots b JOIN workspaces w ON w.id = b.workspace_id
       CROSS JOIN LATERAL (SELECT COALESCE(max(l.created_at), w.created_at) AS at
                             FROM credit_ledger l WHERE l.workspace_id = w.id) changed
      WHERE b.id = $1 AND b.workspace_id = $2`,
    [agentId, workspaceId],
  );
  const bot = res.rows[0];
  // The same answer as the services give for another workspace's agent: nothing tells it exists.
  if (!bot) throw errors.notFound('No such bot in your workspace');
  return bot;
}
