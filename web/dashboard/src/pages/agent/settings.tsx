import { useState } from 'preact/hooks';
import { type Bot, type ModelChoices, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time } from '../../ui/format';
import { Panel } from '../../ui/page';
import { useAction, useResource } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import { BusinessHoursEditor } from './business-hours';
import { FailedDeliveries } from './failed-deliveries';
import { DeleteAgent } from './delete-agent';
import { hoursSummary, plainSettingsError } from './hours-model';
import { changedFrom, formOf, patchOf } from './settings-model';
import type { TabProps } from './tab';

type WhenUnanswered = Bot['when_unanswered'];

const UNANSWERED: Record<WhenUnanswered, string> = { offer: 'Offer a person', hand_over: 'Hand over at once' };

/**
 * Name, instructions, model, handoff (what the agent does when it cannot answer, the team's business hours) of an
 * agent; and deleting it, after typing its name.
 */
export function SettingsTab(props: TabProps) {
  const { bot, admin } = props;
  const [form, setForm] = useState(() => formOf(bot));
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const models = useResource(() => agents.models(), []);
  const changed = changedFrom(form, bot);

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(false);
    const res = await save.run(() => agents.update(bot.id, patchOf(form)));
    if (res.ok) {
      props.onChange(res.value);
      setSaved(true);
    }
  }

  if (!admin) return <SettingsSummary bot={bot} />;

  return (
    <>
      <Panel title="Settings" description="What the agent is called, how it behaves and when it hands over to a human.">
        <form onSubmit={(e) => void submit(e)} onInput={() => setSaved(false)}>
          <Field id="bot-name" label="Name">
            <input
              id="bot-name"
              required
              maxLength={200}
              value={form.name}
              onInput={(e) => setForm({ ...form, name: valueOf(e) })}
            />
          </Field>
          <Field
            id="bot-instructions"
            label="Instructions"
            hint="The agent follows these in every conversation and run."
          >
            <textarea
              id="bot-instructions"
              rows={8}
              maxLength={20000}
              value={form.instructions}
              onInput={(e) => setForm({ ...form, instructions: valueOf(e) })}
            />
          </Field>
          <div class="form-row">
            <Field
              id="bot-model"
              label="Model"
              hint="The models your plan includes. A run costs 1 credit plus its tokens times the model's weight per 1 000."
            >
              <ModelSelect value={form.model} choices={models.data} onChange={(model) => setForm({ ...form, model })} />
            </Field>
            <Field
              id="bot-handoff-url"
              label="Handoff webhook address"
              optional
              hint="Signed events when a conversation goes to a human and back."
            >
              <input
                id="bot-handoff-url"
                type="url"
                placeholder="https://example.com/hooks/handoff"
                value={form.handoff_webhook_url}
                onInput={(e) => setForm({ ...form, handoff_webhook_url: valueOf(e) })}
              />
            </Field>
          </div>
          <label class="check">
            <input
              type="checkbox"
              checked={form.handoff_enabled}
              onChange={(e) => setForm({ ...form, handoff_enabled: (e.currentTarget as HTMLInputElement).checked })}
            />
            <span>
              Visitors can ask for a human
              <span class="hint">Conversations then wait in the Inbox for an operator.</span>
            </span>
          </label>
          <UnansweredChoice
            value={form.when_unanswered}
            handoff={form.handoff_enabled}
            onChange={(when_unanswered) => setForm({ ...form, when_unanswered })}
          />
          <BusinessHoursEditor
            value={form.hours}
            onChange={(hours) => setForm({ ...form, hours })}
            problem={save.failure?.status === 400 ? save.failure.message : undefined}
          />
          {save.failure && (
            <ErrorBox
              title={save.failure.status === 400 ? 'Not saved.' : undefined}
              failure={
                save.failure.status === 400
                  ? { ...save.failure, message: plainSettingsError(save.failure.message) }
                  : save.failure
              }
            />
          )}
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={save.busy === 'busy'} busyLabel="Saving…" disabled={!changed}>
              Save changes
            </Button>
            <span aria-live="polite" class="muted small">
              {saved && !changed ? 'Saved.' : ''}
            </span>
          </div>
        </form>
        {bot.created_at && (
          <p class="muted small meta-line">
            Id <code>{bot.id}</code> · created <Time ms={bot.created_at} />
          </p>
        )}
      </Panel>
      <FailedDeliveries bot={bot} />
      <DeleteAgent {...props} />
    </>
  );
}

/** The settings as an operator sees them: read only. */
function SettingsSummary(props: { bot: Bot }) {
  const { bot } = props;
  return (
    <Panel title="Settings">
      <dl class="dl">
        <dt>Name</dt>
        <dd>{bot.name}</dd>
        <dt>Instructions</dt>
        <dd class="prewrap">{bot.instructions || '—'}</dd>
        <dt>Model</dt>
        <dd>{bot.model ?? 'Workspace default'}</dd>
        <dt>Handoff to a human</dt>
        <dd>{bot.handoff_enabled ? 'On' : 'Off'}</dd>
        <dt>When it cannot answer</dt>
        <dd>{bot.handoff_enabled ? UNANSWERED[bot.when_unanswered] : 'Says so'}</dd>
        <dt>Business hours</dt>
        <dd>{hoursSummary(bot.business_hours)}</dd>
      </dl>
    </Panel>
  );
}

/** What the agent does when it cannot answer from its knowledge; a choice only while visitors can ask for a human. */
function UnansweredChoice(props: {
  value: WhenUnanswered;
  handoff: boolean;
  onChange: (value: WhenUnanswered) => void;
}) {
  const option = (value: WhenUnanswered, hint: string) => (
    <label class="check">
      <input
        type="radio"
        name="when-unanswered"
        value={value}
        checked={props.value === value}
        onChange={() => props.onChange(value)}
      />
      <span>
        {UNANSWERED[value]}
        <span class="hint">{hint}</span>
      </span>
    </label>
  );
  return (
    <fieldset class="unanswered" disabled={!props.handoff} aria-describedby="unanswered-hint">
      <legend>When the agent cannot answer from its knowledge</legend>
      {option('offer', 'It says so and offers the visitor a button to talk to a person.')}
      {option('hand_over', 'It says so and hands the conversation to the Inbox right away.')}
      <p class="hint" id="unanswered-hint">
        {props.handoff
          ? 'Either way it never makes an answer up.'
          : 'Off while visitors cannot ask for a human: the agent then only says it cannot answer.'}
      </p>
    </fieldset>
  );
}

/**
 * The model of an agent: the platform's default, or one the plan includes (the server refuses others). A model set
 * earlier that the plan no longer includes stays shown, marked: runs use the default until it is changed.
 */
function ModelSelect(props: { value: string; choices: ModelChoices | undefined; onChange: (model: string) => void }) {
  const choices = props.choices?.models ?? [];
  const current = props.value && !choices.some((m) => m.name === props.value) ? props.value : undefined;
  return (
    <select
      id="bot-model"
      value={props.value}
      onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
    >
      <option value="">Platform default{props.choices ? ` (${props.choices.default_model})` : ''}</option>
      {choices
        .filter((m) => m.name !== props.choices?.default_model)
        .map((m) => (
          <option key={m.name} value={m.name}>
            {m.name} — {m.weight}× credits
          </option>
        ))}
      {current && props.choices && <option value={current}>{current} — not in your plan: runs use the default</option>}
      {current && !props.choices && <option value={current}>{current}</option>}
    </select>
  );
}
