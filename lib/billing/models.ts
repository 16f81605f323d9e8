import { ApiError } from '../errors';
import { PLANS, type PlanId } from './plans';

/**
 * The models an agent may use, what a run on each costs in credits, and which plans may use it (docs/decisions/107-model-catalogue.md).
 * Sign-up is open with free credits and every run is paid with the platform's own LLM key,
 * so an agent's `model` is never free text: it is one of these, allowed on the workspace's plan.
 *
 * `weight` is the model's price relative to the default (gpt-4o-mini = 1): a run costs 1 credit plus one per started
 * 1 000 tokens times the weight (lib/runs/bookkeeping.ts, creditsFor). The weights are OpenAI's list prices per
 * million tokens (platform.openai.com/docs/pricing, as of mid-2025), input and output alike in proportion:
 *   gpt-4o-mini   $0.15 in / $0.60 out  → 1
 *   gpt-4.1-nano  $0.10 / $0.40         → 0.7
 *   gpt-4.1-mini  $0.40 / $1.60         → 2.7
 *   o4-mini       $1.10 / $4.40         → 7.3 (its reasoning tokens are billed as output, and counted here too)
 *   gpt-4.1       $2.00 / $8.00         → 13.3
 *   gpt-4o        $2.50 / $10.00        → 16.7
 * The Free plan has the cheap ones only (weight under 3); paid plans have all.
 */
export interface ModelEntry {
  /** The model's name as the backend takes it; a name ending in `*` stands for every name it starts (`fake-*`). */
  name: string;
  weight: number;
  plans: readonly PlanId[];
}

const ALL_PLANS: readonly PlanId[] = PLANS.map((p) => p.id);
const PAID: readonly PlanId[] = ALL_PLANS.filter((p) => p !== 'free');

export const BUILT_IN_MODELS: readonly ModelEntry[] = [
  { name: 'gpt-4o-mini', weight: 1, plans: ALL_PLANS },
  { name: 'gpt-4.1-nano', weight: 0.7, plans: ALL_PLANS },
  { name: 'gpt-4.1-mini', weight: 2.7, plans: ALL_PLANS },
  { name: 'o4-mini', weight: 7.3, plans: PAID },
  { name: 'gpt-4.1', weight: 13.3, plans: PAID },
  { name: 'gpt-4o', weight: 16.7, plans: PAID },
];

/**
 * `LLM_MODELS`: entries `name:weight[:plans]` separated by commas, where plans are plan ids joined by `|` (none
 * given: every plan; `-`: no plan, which removes a built-in model). Each entry adds a model or replaces the built-in
 * one of the same name. Example: `gpt-4o:20:pro|business,llama-3.3-70b:4`. Throws a readable message on a mistake
 * (the configuration check shows it at start-up).
 */
export function parseModelList(spec: string): ModelEntry[] {
  const entries: ModelEntry[] = [];
  for (const raw of spec.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const [name, weightText, plansText, ...rest] = item.split(':').map((s) => s.trim());
    const weight = Number(weightText);
    if (!name || rest.length || weightText === undefined || !Number.isFinite(weight) || weight <= 0) {
      throw new Error(`"${item}" is not name:weight[:plan|plan…] with a weight above 0`);
    }
    let plans: PlanId[] = [...ALL_PLANS];
    if (plansText === '-') plans = [];
    else if (plansText) {
      plans = [];
      for (const p of plansText.split('|').map((s) => s.trim())) {
        if (!ALL_PLANS.includes(p as PlanId))
          throw new Error(`"${item}": unknown plan "${p}" (${ALL_PLANS.join(', ')})`);
        plans.push(p as PlanId);
      }
    }
    entries.push({ name, weight, plans });
  }
  return entries;
}

/** A model as the dashboard offers it for one plan. */
export interface ModelChoice {
  name: string;
  weight: number;
}

/**
 * The catalogue in force: the built-in models, `LLM_MODELS` over them, and the configured `LLM_MODEL` always allowed
 * on every plan with weight 1 (the platform's default is what everyone may use, whatever it costs).
 */
export function createModelCatalogue(input: { defaultModel: string; spec?: string }) {
  const byName = new Map<string, ModelEntry>();
  for (const m of [...BUILT_IN_MODELS, ...(input.spec ? parseModelList(input.spec) : [])]) byName.set(m.name, m);
  byName.set(input.defaultModel, { name: input.defaultModel, weight: 1, plans: ALL_PLANS });
  const entries = [...byName.values()].filter((m) => m.plans.length > 0);

  const find = (model: string): ModelEntry | undefined =>
    byName.get(model) ??
    entries.find((m) => m.name.endsWith('*') && model.length >= m.name.length && model.startsWith(m.name.slice(0, -1)));

  const allowedOn = (model: string, plan: string): boolean => find(model)?.plans.includes(plan as PlanId) ?? false;

  const catalogue = {
    defaultModel: input.defaultModel,

    /** The models a plan may use (patterns not listed: they are for operators and tests), cheapest first. */
    choicesFor(plan: string): ModelChoice[] {
      return entries
        .filter((m) => !m.name.endsWith('*') && m.plans.includes(plan as PlanId))
        .map((m) => ({ name: m.name, weight: m.weight }))
        .sort((a, b) => a.weight - b.weight || a.name.localeCompare(b.name));
    },

    /**
     * An agent's model being set on a workspace of `plan`: null (the default) or an allowed model passes; anything
     * else is 400 `bad_request` naming the allowed models (also in `allowed_models`).
     */
    check(model: string | null | undefined, plan: string): void {
      if (model === null || model === undefined || allowedOn(model, plan)) return;
      const allowed = catalogue.choicesFor(plan).map((m) => m.name);
      throw new ApiError(
        'bad_request',
        `The model "${model}" is not available on this workspace's plan; choose one of: ${allowed.join(', ')} ` +
          `(or none for the platform's default, ${input.defaultModel})`,
        { allowed_models: allowed },
      );
    },

    /**
     * The model a run uses: the agent's own when its plan still allows it, else null (the default). A plan changed
     * to a cheaper one, or a model taken out of the catalogue, never makes a run cost more than its plan allows.
     */
    resolve(model: string | null, plan: string): string | null {
      return model !== null && allowedOn(model, plan) ? model : null;
    },

    /** The credit weight of a model (null: the default's, 1); a model not in the catalogue weighs as the default. */
    weightOf(model: string | null): number {
      return model === null ? 1 : (find(model)?.weight ?? 1);
    },
  };
  return catalogue;
}

export type ModelCatalogue = ReturnType<typeof createModelCatalogue>;
