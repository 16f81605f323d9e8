import type { Bot, BotPatch } from '../../api/agents';
import { type HoursDraft, draftOf, hoursOf, sameHours } from './hours-model';

/**
 * An agent's settings as the Settings tab edits them, apart from the DOM: the form from the agent, whether it differs
 * from what the API has, and the change to send.
 */

export interface SettingsForm {
  name: string;
  instructions: string;
  /** '' for the platform's default. */
  model: string;
  handoff_enabled: boolean;
  /** '' for none. */
  handoff_webhook_url: string;
  when_unanswered: Bot['when_unanswered'];
  hours: HoursDraft;
}

export const formOf = (bot: Bot): SettingsForm => ({
  name: bot.name,
  instructions: bot.instructions,
  model: bot.model ?? '',
  handoff_enabled: bot.handoff_enabled,
  handoff_webhook_url: bot.handoff_webhook_url ?? '',
  when_unanswered: bot.when_unanswered,
  hours: draftOf(bot.business_hours),
});

export const changedFrom = (form: SettingsForm, bot: Bot): boolean =>
  form.name !== bot.name ||
  form.instructions !== bot.instructions ||
  form.model !== (bot.model ?? '') ||
  form.handoff_enabled !== bot.handoff_enabled ||
  form.handoff_webhook_url !== (bot.handoff_webhook_url ?? '') ||
  form.when_unanswered !== bot.when_unanswered ||
  !sameHours(hoursOf(form.hours), bot.business_hours);

export const patchOf = (form: SettingsForm): BotPatch => ({
  name: form.name.trim(),
  instructions: form.instructions,
  model: form.model.trim() || null,
  handoff_enabled: form.handoff_enabled,
  handoff_webhook_url: form.handoff_webhook_url.trim() || null,
  when_unanswered: form.when_unanswered,
  business_hours: hoursOf(form.hours),
});
