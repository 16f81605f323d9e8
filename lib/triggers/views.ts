import { errors } from '../errors';
import type { TriggerDeps } from './deps';
import { type TriggerRow, findTrigger } from './store';

/** A trigger as the dashboard (and the builder) show it; the secret appears only in the creation's answer. */
export function view(t: TriggerRow, baseUrl: string) {
  return {
    id: t.id,
    bot_id: t.bot_id,
    kind: t.kind,
    name: t.name,
    task: t.task,
    mode: t.mode,
    enabled: t.enabled,
    disabled_reason: t.disabled_reason,
    consecutive_failures: t.consecutive_failures,
    hook_url: t.kind === 'webhook' ? `${baseUrl.replace(/\/$/, '')}/v1/hooks/${t.id}` : null,
    secret_fingerprint: t.secret_fingerprint,
    schedule: t.kind === 'schedule' ? { cron: t.schedule_cron, every_seconds: t.every_seconds } : null,
    poll: t.kind === 'poll' ? { url: t.poll_url!, every_seconds: t.every_seconds } : null,
    created_at: t.created_at.getTime(),
  };
}

export type TriggerView = ReturnType<typeof view>;

/** The bot's trigger, or 404 (a deleted one, or another bot's, is not found). */
export async function loadTrigger(deps: TriggerDeps, botId: string, triggerId: string): Promise<TriggerRow> {
  const t = await findTrigger(deps.db, triggerId, botId);
  if (!t) throw errors.notFound('No such trigger');
  return t;
}

export async function listTriggers(deps: TriggerDeps, botId: string, baseUrl: string): Promise<TriggerView[]> {
  const res = await deps.db.query<TriggerRow>(
    `SELECT * FROM triggers WHERE bot_id = $1 AND deleted_at IS NULL ORDER BY created_at`,
    [botId],
  );
  return res.rows.map((t) => view(t, baseUrl));
}

export async function getTrigger(
  deps: TriggerDeps,
  botId: string,
  triggerId: string,
  baseUrl: string,
): Promise<TriggerView> {
  return view(await loadTrigger(deps, botId, triggerId), baseUrl);
}
