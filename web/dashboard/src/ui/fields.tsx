import type { ComponentChildren } from 'preact';
import { LIMITS } from '../../../shared/contract';

/** Form fields: a labelled control, a password, one choice among a few. */

/** A labelled form field; the control is the child, with `id` equal to `id`. */
export function Field(props: {
  id: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string;
  children: ComponentChildren;
  optional?: boolean;
}) {
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label for={props.id}>
        {props.label}
        {props.optional && <span class="optional"> (optional)</span>}
      </label>
      {props.children}
      {props.hint && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** `onInput` for text controls: the new value. */
export const valueOf = (event: Event) => (event.currentTarget as HTMLInputElement).value;

/**
 * A password in its labelled field. `fresh`: a password being chosen (the length hint, and `new-password` so password
 * managers offer to generate and save it); otherwise the one the person has (`current-password`).
 */
export function PasswordField(props: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  fresh?: boolean;
  hint?: ComponentChildren;
}) {
  // `hint={null}`: none (a repeated password needs no second hint).
  const hint =
    props.hint !== undefined
      ? props.hint
      : props.fresh
        ? `At least ${LIMITS.account.passwordMinChars} characters.`
        : undefined;
  return (
    <Field id={props.id} label={props.label} hint={hint}>
      <input
        id={props.id}
        type="password"
        required
        autoComplete={props.fresh ? 'new-password' : 'current-password'}
        aria-describedby={hint ? `${props.id}-hint` : undefined}
        value={props.value}
        onInput={(e) => props.onValue(valueOf(e))}
      />
    </Field>
  );
}

/**
 * One choice among a few, drawn as joined buttons (styles/forms.css .segmented): radio inputs underneath, so keys and
 * screen readers work as usual. With a `legend` it is its own fieldset, the legend shown or (`legendHidden`) read
 * only by screen readers; without, the caller's fieldset holds it with more.
 */
export function Segmented<T extends string | number | boolean>(props: {
  name: string;
  value: T;
  options: readonly { value: T; label: ComponentChildren }[];
  onChange: (value: T) => void;
  legend?: string;
  legendHidden?: boolean;
  /** The fieldset's class, with a legend. */
  class?: string;
}) {
  if (props.legend !== undefined) {
    const { legend, legendHidden, class: cls, ...choice } = props;
    return (
      <fieldset class={cls}>
        <legend class={legendHidden ? 'visually-hidden' : undefined}>{legend}</legend>
        <Segmented {...choice} />
      </fieldset>
    );
  }
  return (
    <div class="segmented">
      {props.options.map((o) => (
        <label key={String(o.value)}>
          <input
            type="radio"
            name={props.name}
            value={String(o.value)}
            checked={props.value === o.value}
            onChange={() => props.onChange(o.value)}
          />
          {o.label}
        </label>
      ))}
    </div>
  );
}
