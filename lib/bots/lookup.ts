import { errors } from '../errors';
import type { BotDeps } from './deps';
import { BOT_COLUMNS, type BotSummary, type BotView, viewOf } from './views';

/** The workspace's bots, oldest first, with what the list shows of each. */
export async function listBots(deps: BotDeps, workspaceId: string): Promise<BotSummary[]> {
  const res = await deps.db.query<{
    id: string;
    name: string;
    created_ms: string;
    knowledge_sources: number;
    open_requests: number;
  }>(
    `SELECT b.id, b.name, (extract(epoch FROM b.created_at) * 1000)::bigint AS created_ms,
            (SELECT count(*)::int FROM knowledge_sources s WHERE s.bot_id = b.id) AS knowledge_sources,
            (SELECT count(*)::int FROM conversations c
              WHERE c.bot_id = b.id AND c.status IN ('waiting', 'operator')) AS open_requests
       FROM bots b WHERE b.workspace_id = $1 ORDER BY b.created_at, b.id`,
    [workspaceId],
  );
  return res.rows.map(({ created_ms, ...b }) => ({ ...b, created_at: Number(created_ms) }));
}

/** The bot if it is the workspace's; 404 for another workspace's bot (never 403: nothing leaks). */
export async function findInWorkspace(
  deps: BotDeps,
  workspaceId: string,
  botId: string,
): Promise<{ id: string; workspace_id: string }> {
  const res = await deps.db.query<{ id: string; workspace_id: string }>(
    `SELECT id, workspace_id FROM bots WHERE id = $1 AND workspace_id = $2`,
    [botId, workspaceId],
  );
  if (!res.rows[0]) throw errors.notFound('No such bot in your workspace');
  return res.rows[0];
}

export async function getBot(deps: BotDeps, botId: string): Promise<BotView> {
  const res = await deps.db.query<BotView>(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [botId]);
  if (!res.rows[0]) throw errors.notFound('No such bot');
  return viewOf(res.rows[0]);
}
