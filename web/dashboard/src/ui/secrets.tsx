import type { ComponentChildren } from 'preact';
import { Button, CopyButton } from './buttons';

/** Values shown to copy: keys, addresses, snippets, and secrets the API shows only once. */

/** A value in monospace with a copy button (keys, addresses, snippets). */
export function CopyField(props: { label: string; value: string; testId?: string; multiline?: boolean }) {
  return (
    <div class="copy-field">
      <span class="copy-label">{props.label}</span>
      <div class="copy-row">
        <code class={props.multiline ? 'copy-value copy-value-multiline' : 'copy-value'} data-testid={props.testId}>
          {props.value}
        </code>
        <CopyButton value={props.value} label="Copy" />
      </div>
    </div>
  );
}

/** Secrets the API shows only once: say so, offer copies, and a way to put them away. */
export function OnceSecrets(props: {
  title: string;
  values: { label: string; value: string; testId?: string }[];
  onDone?: () => void;
  /** Beside the done button (a way on). */
  actions?: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <div class="once" role="region" aria-label={props.title}>
      <h3 class="once-title">{props.title}</h3>
      <p class="once-note">
        Copy {props.values.length > 1 ? 'these now: they are' : 'it now: it is'} shown only this once. Only fingerprints
        are kept for display later.
      </p>
      {props.children}
      {props.values.map((v) => (
        <CopyField key={v.label} label={v.label} value={v.value} testId={v.testId} />
      ))}
      {(props.onDone || props.actions) && (
        <div class="once-actions form-actions">
          {props.actions}
          {props.onDone && (
            <Button onClick={props.onDone}>I have copied {props.values.length > 1 ? 'them' : 'it'}</Button>
          )}
        </div>
      )}
    </div>
  );
}
