import { checkCron, checkInterval, checkShape } from './checks';
import type { TriggerSettings } from './create';
import type { TriggerDeps } from './deps';
import { converge } from './schedules';
import type { TriggerRow } from './store';
import { type TriggerView, loadTrigger, view } from './views';

export type TriggerPatch = Partial<Omit<TriggerSettings, 'kind' | 'enabled'>>;

/** Changes name, task, mode, schedule or poll settings; the schedule follows. */
export async function updateTrigger(
  deps: TriggerDeps,
  botId: string,
  triggerId: string,
  p: TriggerPatch,
  baseUrl: string,
): Promise<TriggerView> {
  const t = await loadTrigger(deps, botId, triggerId);
  checkShape(t.kind, p);
  checkInterval(deps, p.schedule?.every_seconds ?? p.poll?.every_seconds);
  if (p.schedule?.cron) await checkCron(deps, p.schedule.cron);
  const res = await deps.db.query<TriggerRow>(
    `UPDATE triggers SET name = COALESCE($2, name), task = COALESCE($3, task), mode = COALESCE($4, mode),
            schedule_cron = CASE WHEN $5::boolean THEN $6 ELSE schedule_cron END,
            every_seconds = COALESCE($7, every_seconds), poll_url = COALESCE($8, poll_url),
            poll_last_hash = CASE WHEN $8::text IS NOT NULL AND $8 IS DISTINCT FROM poll_url THEN NULL ELSE poll_last_hash END,
            schedule_rev = schedule_rev + 1, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [
      t.id,
      p.name ?? null,
      p.task ?? null,
      p.mode ?? null,
      p.schedule !== undefined,
      p.schedule?.cron ?? null,
      p.schedule?.every_seconds ?? p.poll?.every_seconds ?? null,
      p.poll?.url ?? null,
    ],
  );
  await converge(deps, res.rows[0]);
  return view(res.rows[0], baseUrl);
}

/** Turns a trigger on (also after a pause for failed runs: the count starts again) or off; its schedule follows. */
export async function setEnabled(
  deps: TriggerDeps,
  botId: string,
  triggerId: string,
  enabled: boolean,
  baseUrl: string,
): Promise<TriggerView> {
  const t = await loadTrigger(deps, botId, triggerId);
  const res = await deps.db.query<TriggerRow>(
    `UPDATE triggers SET enabled = $2, disabled_reason = $3, consecutive_failures = CASE WHEN $2 THEN 0 ELSE consecutive_failures END,
            schedule_rev = schedule_rev + 1, updated_at = now() WHERE id = $1 RETURNING *`,
    [t.id, enabled, enabled ? null : 'owner'],
  );
  await converge(deps, res.rows[0]);
  return view(res.rows[0], baseUrl);
}

/** Deletes a trigger: its hook answers 404 and its schedule is removed. */
export async function removeTrigger(
  deps: TriggerDeps,
  botId: string,
  triggerId: string,
): Promise<{ status: 'deleted'; id: string }> {
  const t = await loadTrigger(deps, botId, triggerId);
  const res = await deps.db.query<TriggerRow>(
    `UPDATE triggers SET deleted_at = now(), enabled = false, schedule_rev = schedule_rev + 1, updated_at = now()
      WHERE id = $1 RETURNING *`,
    [t.id],
  );
  await converge(deps, res.rows[0]);
  return { status: 'deleted', id: t.id };
}

/** Deletes every trigger of a bot (the bot is being deleted): hooks answer 404, Schedules are removed. */
export async function removeAllOfBot(deps: TriggerDeps, botId: string): Promise<number> {
  const res = await deps.db.query<TriggerRow>(
    `UPDATE triggers SET deleted_at = now(), enabled = false, schedule_rev = schedule_rev + 1, updated_at = now()
      WHERE bot_id = $1 AND deleted_at IS NULL RETURNING *`,
    [botId],
  );
  for (const row of res.rows) await converge(deps, row);
  return res.rows.length;
}
