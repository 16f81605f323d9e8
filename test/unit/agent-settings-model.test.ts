/** An agent's settings as the Settings tab edits them (web/dashboard/src/pages/agent/settings-model.ts). */
import { describe, expect, it, jest } from '@jest/globals';

/** Typed by what the test uses of it (the dashboard's files import each other without extensions; see hours-model). */
type Bot = {
  name: string;
  instructions: string;
  model: string | null;
  handoff_enabled: boolean;
  handoff_webhook_url: string | null;
  when_unanswered: 'offer' | 'hand_over';
  business_hours: { time_zone: string; open: { days: string[]; from: string; to: string }[] } | null;
};
type Form = Omit<Bot, 'model' | 'handoff_webhook_url' | 'business_hours'> & {
  model: string;
  handoff_webhook_url: string;
  hours: { on: boolean };
};
const { formOf, changedFrom, patchOf } = jest.requireActual<{
  formOf(bot: Bot): Form;
  changedFrom(form: Form, bot: Bot): boolean;
  patchOf(form: Form): Record<string, unknown>;
}>('../../web/dashboard/src/pages/agent/settings-model');

const bot: Bot = {
  name: 'Support',
  instructions: 'Be kind.',
  model: null,
  handoff_enabled: true,
  handoff_webhook_url: null,
  when_unanswered: 'offer',
  business_hours: null,
};

describe("an agent's settings form, apart from the page", () => {
  it('starts from the agent, unchanged, and knows when it differs', () => {
    const form = formOf(bot);
    expect(form).toMatchObject({ name: 'Support', model: '', handoff_webhook_url: '' });
    expect(changedFrom(form, bot)).toBe(false);
    expect(changedFrom({ ...form, name: 'Sales' }, bot)).toBe(true);
    expect(changedFrom({ ...form, hours: { ...form.hours, on: true } }, bot)).toBe(true);
  });

  it('sends names trimmed and empty choices as null (the default model, no webhook, always open)', () => {
    const patch = patchOf({ ...formOf(bot), name: '  Sales ', model: ' ', handoff_webhook_url: '' });
    expect(patch).toEqual({ ...bot, name: 'Sales' });
  });
});
