import type { Queryable } from '../db';
import { readAgent } from './incidents/agent';
import { approvalWaiting, readWaitingApprovals } from './incidents/approval-waiting';
import { type Incident, KIND_ORDER } from './incidents/kinds';
import { knowledgeEmpty } from './incidents/knowledge-empty';
import { llmUnavailable, readLlmFailures } from './incidents/llm-unavailable';
import { outOfCredits } from './incidents/out-of-credits';
import { readLatestScans, scanFailed, scansRunning } from './incidents/scan-failed';
import { readTriggerStreaks, triggerIncidents } from './incidents/triggers';
import { readFailedDeliveries, webhookFailing } from './incidents/webhook-failing';

export type { Incident } from './incidents/kinds';

/**
 * The data of the builder's two read-only tools (contract, Builder over MCP: `agents` and `incidents`). Everything is
 * read from Postgres in a fixed number of statements, whatever the number of agents, triggers or runs: one for
 * `agents`, two round trips for `incidents` (the agent first, so another workspace's agent learns nothing, then the
 * five signal reads side by side). The payload shapes are decided in docs/decisions/065-builder-agents-tool.md and
 * 066-builder-incidents-tool.md; each incident kind is read and judged in its own module under `incidents/`.
 */

/** One agent of the workspace as the `agents` tool lists it. */
export interface AgentOverview {
  id: string;
  name: string;
  /** Knowledge sources, whatever wrote them (the API, the builder, a site scan). */
  knowledge_sources: number;
  /** Where the agent can be woken: its chat (every agent has one: API and widget) and its triggers (not deleted). */
  channels: { chat: true; triggers: number; total: number };
  /** True on the agent the presenting builder key was issued for; false on the others and for workspace keys. */
  issued_for_this_key: boolean;
}

/** The workspace's agents, by name as people sort names; `markedBotId` is the presenting builder key's agent. */
async function agents(db: Queryable, workspaceId: string, markedBotId: string | null): Promise<AgentOverview[]> {
  const res = await db.query<{ id: string; name: string; sources: number; triggers: number }>(
    `SELECT b.id, b.name,
            (SELECT count(*) FROM knowledge_sources k WHERE k.bot_id = b.id)::int AS sources,
            (SELECT count(*) FROM triggers t WHERE t.bot_id = b.id AND t.deleted_at IS NULL)::int AS triggers
       FROM bots b WHERE b.workspace_id = $1`,
    [workspaceId],
  );
  // Sorted here, not in SQL: Postgres with a C locale neither folds case nor orders non-ASCII letters by language.
  const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });
  return res.rows
    .sort((a, b) => collator.compare(a.name, b.name) || cmp(a.name, b.name) || cmp(a.id, b.id))
    .map((r) => ({
      id: r.id,
      name: r.name,
      knowledge_sources: r.sources,
      channels: { chat: true as const, triggers: r.triggers, total: r.triggers + 1 },
      issued_for_this_key: r.id === markedBotId,
    }));
}

/** What is wrong with one agent of the workspace and how to fix it, blocking first (docs/decisions/066). */
async function incidents(db: Queryable, workspaceId: string, agentId: string): Promise<Incident[]> {
  const bot = await readAgent(db, workspaceId, agentId);
  const [triggers, llm, deliveries, scans, approvals] = await Promise.all([
    readTriggerStreaks(db, agentId),
    readLlmFailures(db, agentId),
    readFailedDeliveries(db, agentId, bot.webhook_url),
    readLatestScans(db, agentId),
    readWaitingApprovals(db, agentId),
  ]);
  const found: Incident[] = [
    ...outOfCredits(bot),
    ...llmUnavailable(bot, llm),
    ...triggerIncidents(bot, triggers),
    ...webhookFailing(bot, deliveries),
    ...approvalWaiting(bot, approvals),
    ...scanFailed(scans),
    ...knowledgeEmpty(bot, scansRunning(scans)),
  ];
  const rank = (i: Incident) => (i.severity === 'blocking' ? 0 : 1) * 100 + KIND_ORDER.indexOf(i.kind);
  // A stable sort: incidents of one kind keep the order of their query (triggers by creation, scans by start).
  return found.sort((x, y) => rank(x) - rank(y));
}

export function createBuilderOverview(deps: { db: Queryable }) {
  return {
    agents: (workspaceId: string, markedBotId: string | null) => agents(deps.db, workspaceId, markedBotId),
    incidents: (workspaceId: string, agentId: string) => incidents(deps.db, workspaceId, agentId),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type BuilderOverview = ReturnType<typeof createBuilderOverview>;
