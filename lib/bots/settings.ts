import type { ModelChoice } from '../billing/models';
import { errors } from '../errors';
import type { WhenUnanswered } from '../../workflows/contracts/agent-run';
import type { BotDeps } from './deps';
import type { BusinessHours } from './hours';
import { BOT_COLUMNS, type BotView, type WidgetLook, viewOf } from './views';

export interface BotSettings {
  name?: string;
  instructions?: string;
  model?: string | null;
  handoff_enabled?: boolean;
  when_unanswered?: WhenUnanswered;
  business_hours?: BusinessHours | null;
  handoff_webhook_url?: string | null;
  allowed_origins?: string[];
  /** Merged into what is set; a field set to null goes back to its default. */
  widget_look?: Partial<{ [K in keyof WidgetLook]: WidgetLook[K] | null }>;
}

const SETTINGS: (keyof BotSettings)[] = [
  'name',
  'instructions',
  'model',
  'handoff_enabled',
  'when_unanswered',
  'business_hours',
  'handoff_webhook_url',
  'allowed_origins',
];

/** The models the workspace's plan allows (the agent settings' choice) and the platform's default. */
export async function modelChoices(
  deps: BotDeps,
  workspaceId: string,
): Promise<{ default_model: string; plan: string; models: ModelChoice[] }> {
  const res = await deps.db.query<{ plan: string }>(`SELECT plan FROM workspaces WHERE id = $1`, [workspaceId]);
  const plan = res.rows[0]?.plan ?? 'free';
  return { default_model: deps.models.defaultModel, plan, models: deps.models.choicesFor(plan) };
}

/**
 * Changes the settings given; the others stay. A model must be allowed on the workspace's plan (400 `bad_request`
 * naming the allowed ones): every surface that sets it (dashboard, builder) comes through here.
 */
export async function updateBot(deps: BotDeps, botId: string, patch: BotSettings): Promise<BotView> {
  if (patch.model !== undefined && patch.model !== null) {
    const plan = await deps.db.query<{ plan: string }>(
      `SELECT w.plan FROM bots b JOIN workspaces w ON w.id = b.workspace_id WHERE b.id = $1`,
      [botId],
    );
    if (!plan.rows[0]) throw errors.notFound('No such bot');
    deps.models.check(patch.model, plan.rows[0].plan);
  }
  const columns = SETTINGS.filter((k) => patch[k] !== undefined);
  const values: unknown[] = columns.map((c) => patch[c]);
  const sets = columns.map((c, i) => `${c} = $${i + 2}, `);
  if (patch.widget_look) {
    values.push(JSON.stringify(patch.widget_look));
    sets.push(`widget_look = jsonb_strip_nulls(widget_look || $${values.length + 1}::jsonb), `);
  }
  const res = await deps.db.query<BotView>(
    `UPDATE bots SET ${sets.join('')}updated_at = now() WHERE id = $1 RETURNING ${BOT_COLUMNS}`,
    [botId, ...values],
  );
  if (!res.rows[0]) throw errors.notFound('No such bot');
  return viewOf(res.rows[0]);
}
