import { approvalWorkflowId } from '../../../workflows/contracts/action-approval';
import type { Queryable } from '../../db';
import { type AgentFacts, type Incident, ms, quote } from './kinds';

/** A chat turn's approval expires after this long (workflows/action-approval.ts, APPROVAL_EXPIRES). */
const APPROVAL_EXPIRES_DAYS = 7;
/** Ids listed in one incident's details; the count says how many there are. */
const MAX_IDS = 10;

interface WaitingApprovals {
  count: number;
  since: Date | null;
  ids: string[] | null;
  actions: string[] | null;
}

/** Calls waiting for the owner: a trigger run's while the run still waits, a chat turn's until it expires. */
export async function readWaitingApprovals(db: Queryable, agentId: string): Promise<WaitingApprovals | undefined> {
  const res = await db.query<WaitingApprovals>(
    `SELECT count(*)::int AS count, min(p.created_at) AS since,
            (array_agg(p.id ORDER BY p.created_at, p.id))[1:${MAX_IDS}] AS ids,
            array_agg(DISTINCT a.name ORDER BY a.name) FILTER (WHERE a.name IS NOT NULL) AS actions
       FROM action_approvals p
       LEFT JOIN bot_actions a ON a.id = p.action_id
       LEFT JOIN runs r ON r.id = p.run_id
      WHERE p.bot_id = $1 AND p.status = 'pending'
        AND (CASE WHEN starts_with(p.workflow_id, $2) THEN p.created_at > now() - make_interval(days => $3)
                  ELSE r.status = 'running' END)`,
    [agentId, approvalWorkflowId(''), APPROVAL_EXPIRES_DAYS],
  );
  return res.rows[0];
}

/** `approval_waiting`: pending approvals, with the first ids and the actions' names. */
export function approvalWaiting(bot: AgentFacts, a: WaitingApprovals | undefined): Incident[] {
  if (!a || a.count <= 0) return [];
  const actions = a.actions ?? [];
  return [
    {
      kind: 'approval_waiting',
      severity: 'warning',
      problem:
        `${a.count} action call(s) of ${bot.name} wait for your approval` +
        (actions.length ? ` (${actions.map(quote).join(', ')})` : '') +
        '; nothing happens until you decide.',
      fix: 'Approve or reject them in the dashboard (approvals). A builder key cannot approve actions, so I cannot do it for you.',
      builder_can_fix: false,
      since: ms(a.since),
      details: { approvals: a.count, approval_ids: a.ids ?? [], actions },
    },
  ];
}
