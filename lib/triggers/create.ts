import { errors } from '../errors';
import { newId } from '../ids';
import { fingerprint, generateKey } from '../keys';
import { checkCron, checkInterval, checkShape } from './checks';
import type { TriggerDeps } from './deps';
import { converge } from './schedules';
import type { TriggerRow } from './store';
import { type TriggerView, view } from './views';

export interface TriggerSettings {
  kind: TriggerRow['kind'];
  name?: string;
  task: string;
  mode: 'ack' | 'wait';
  enabled: boolean;
  schedule?: { cron?: string; every_seconds?: number };
  poll?: { url: string; every_seconds: number };
}

/** Creates a trigger; a webhook trigger's address and secret are in this answer only. */
export async function createTrigger(
  deps: TriggerDeps,
  bot: { id: string; workspace_id: string },
  s: TriggerSettings,
  baseUrl: string,
): Promise<TriggerView & { secret?: string }> {
  checkShape(s.kind, s);
  checkInterval(deps, s.schedule?.every_seconds ?? s.poll?.every_seconds);
  if (s.schedule?.cron) await checkCron(deps, s.schedule.cron);
  const id = newId('trg');
  const secret = s.kind === 'webhook' ? generateKey('trigger') : undefined;
  const res = await deps.db.query<TriggerRow>(
    `INSERT INTO triggers (id, bot_id, workspace_id, kind, name, task, mode, enabled, disabled_reason, secret_sealed, secret_fingerprint,
                           schedule_cron, every_seconds, poll_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
    [
      id,
      bot.id,
      bot.workspace_id,
      s.kind,
      s.name ?? `${s.kind} trigger`,
      s.task,
      s.mode,
      s.enabled,
      s.enabled ? null : 'owner',
      secret ? deps.secrets.seal(secret) : null,
      secret ? fingerprint(secret) : null,
      s.schedule?.cron ?? null,
      s.schedule?.every_seconds ?? s.poll?.every_seconds ?? null,
      s.poll?.url ?? null,
    ],
  );
  const t = res.rows[0];
  try {
    await converge(deps, t);
  } catch (err) {
    // The schedule is part of the trigger: without it, no trigger (an invalid cron lands here).
    await deps.db.query(`DELETE FROM triggers WHERE id = $1`, [id]);
    if ((err as { code?: number }).code === 3 /* INVALID_ARGUMENT */)
      throw errors.badRequest(`schedule: ${(err as Error).message}`);
    throw err;
  }
  return { ...view(t, baseUrl), ...(secret ? { secret } : {}) };
}
