import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Buttons that say they are busy, copy, refresh a read, or confirm a delete in a list row. */

export function Button(
  props: Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type'> & {
    variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
    small?: boolean;
    type?: 'button' | 'submit';
    /** While true: disabled, and `busyLabel` instead of the label. */
    busy?: boolean;
    busyLabel?: string;
  },
) {
  const { variant = 'secondary', small, busy, busyLabel, children, type = 'button', disabled, ...rest } = props;
  const cls = `btn btn-${variant}${small ? ' btn-small' : ''}${rest.class ? ` ${String(rest.class)}` : ''}`;
  return (
    <button {...rest} type={type} class={cls} disabled={Boolean(disabled) || busy} aria-busy={busy || undefined}>
      {busy && <span class="spinner spinner-small" aria-hidden="true" />}
      {busy && busyLabel ? busyLabel : children}
    </button>
  );
}

/** Copies text; says so (aria-live) for two seconds. */
export function CopyButton(props: { value: string; label?: string; small?: boolean }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(props.value);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  const label = props.label ?? 'Copy';
  return (
    <>
      <button
        type="button"
        class={`btn btn-secondary${props.small === false ? '' : ' btn-small'} copy-button`}
        onClick={() => void copy()}
      >
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span class="visually-hidden" aria-live="polite">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Copy failed: select the text' : ''}
      </span>
    </>
  );
}

/** A panel's "Refresh": reads the resource again, keeping what is shown until the answer comes. */
export function RefreshButton(props: { resource: { reload: () => void; refreshing: boolean } }) {
  return (
    <Button
      small
      variant="ghost"
      onClick={props.resource.reload}
      busy={props.resource.refreshing}
      busyLabel="Refreshing…"
    >
      Refresh
    </Button>
  );
}

/** The second step of a delete in a list row: what it will do, then Delete or Keep. */
export function ConfirmDelete(props: {
  /** Names the group for screen readers: "Confirm deleting the source". */
  what: string;
  children: ComponentChildren;
  busy: boolean;
  /** Disables Keep while another action of the row runs too. */
  locked?: boolean;
  onDelete: () => void;
  onKeep: () => void;
}) {
  return (
    <div class="confirm-inline" role="group" aria-label={`Confirm deleting the ${props.what}`}>
      <span>{props.children}</span>
      <Button small variant="danger" busy={props.busy} busyLabel="Deleting…" onClick={props.onDelete}>
        Delete
      </Button>
      <Button small variant="ghost" disabled={props.busy || Boolean(props.locked)} onClick={props.onKeep}>
        Keep
      </Button>
    </div>
  );
}
