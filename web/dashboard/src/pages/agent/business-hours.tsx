import { useMemo } from 'preact/hooks';
import { Button } from '../../ui/buttons';
import { Segmented, valueOf } from '../../ui/fields';
import {
  type HoursDraft,
  MAX_WINDOWS,
  WEEKDAYS,
  type WindowDraft,
  knownZones,
  newWindow,
  refusedParts,
} from './hours-model';
import './business-hours.css';

/**
 * The agent's business hours in its settings: always open, or weekly windows (days, from, to) in one time zone.
 * Saved with the rest of the settings; the API checks the values (`problem`: its refusal, to mark what it named).
 */
export function BusinessHoursEditor(props: {
  value: HoursDraft;
  onChange: (next: HoursDraft) => void;
  problem?: string;
}) {
  const { value, onChange } = props;
  const zones = useMemo(knownZones, []);
  const refused = refusedParts(props.problem);
  const setWindow = (key: number, patch: Partial<WindowDraft>) =>
    onChange({ ...value, open: value.open.map((w) => (w.key === key ? { ...w, ...patch } : w)) });

  return (
    <fieldset class="hours" aria-describedby="hours-hint">
      <legend>Business hours</legend>
      <p class="hint" id="hours-hint">
        When your team answers handed-over conversations. Outside them a visitor who is handed over is told when the
        team is back and asked for an e-mail or phone number; the conversation still waits in the Inbox.
      </p>
      <Segmented
        name="hours-on"
        value={value.on}
        options={[
          { value: false, label: 'Always open' },
          { value: true, label: 'Set hours' },
        ]}
        onChange={(on) => onChange({ ...value, on })}
      />
      {value.on && (
        <div class="hours-body">
          <div class="field">
            <label for="hours-zone">Time zone</label>
            <input
              id="hours-zone"
              list={zones.length ? 'hours-zones' : undefined}
              autoComplete="off"
              spellcheck={false}
              maxLength={64}
              required
              aria-describedby="hours-zone-hint"
              aria-invalid={refused.zone || undefined}
              value={value.timeZone}
              onInput={(e) => onChange({ ...value, timeZone: valueOf(e) })}
            />
            {zones.length > 0 && (
              <datalist id="hours-zones">
                {zones.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            )}
            <p class="hint" id="hours-zone-hint">
              A zone such as Europe/Tallinn; the times below are its local times, daylight saving included.
            </p>
          </div>
          <ul class="hours-windows">
            {value.open.map((w, i) => (
              <li key={w.key}>
                <fieldset class={`hours-window${refused.windows.has(i) ? ' hours-window-invalid' : ''}`}>
                  <legend>Opening hours {i + 1}</legend>
                  <div class="hours-days">
                    {WEEKDAYS.map((d) => (
                      <label key={d.id} class="hours-day">
                        <input
                          type="checkbox"
                          checked={w.days.includes(d.id)}
                          onChange={(e) => {
                            const on = (e.currentTarget as HTMLInputElement).checked;
                            setWindow(w.key, { days: on ? [...w.days, d.id] : w.days.filter((x) => x !== d.id) });
                          }}
                        />
                        <span aria-hidden="true">{d.short}</span>
                        <span class="visually-hidden">{d.long}</span>
                      </label>
                    ))}
                  </div>
                  <div class="hours-times">
                    <label for={`hours-from-${w.key}`}>From</label>
                    <input
                      id={`hours-from-${w.key}`}
                      type="time"
                      required
                      value={w.from}
                      onInput={(e) => setWindow(w.key, { from: valueOf(e) })}
                    />
                    <label for={`hours-to-${w.key}`}>To</label>
                    <input
                      id={`hours-to-${w.key}`}
                      type="time"
                      required
                      aria-describedby="hours-midnight"
                      value={w.to}
                      onInput={(e) => setWindow(w.key, { to: valueOf(e) })}
                    />
                    {value.open.length > 1 && (
                      <Button
                        small
                        variant="ghost"
                        aria-label={`Remove opening hours ${i + 1}`}
                        onClick={() => onChange({ ...value, open: value.open.filter((x) => x.key !== w.key) })}
                      >
                        Remove
                      </Button>
                    )}
                  </div>
                </fieldset>
              </li>
            ))}
          </ul>
          <p class="hint" id="hours-midnight">
            A closing time of midnight (00:00) means the end of the day. A night shift is two openings.
          </p>
          {value.open.length < MAX_WINDOWS && (
            <Button small onClick={() => onChange({ ...value, open: [...value.open, newWindow(['sat'])] })}>
              Add opening hours
            </Button>
          )}
        </div>
      )}
    </fieldset>
  );
}
