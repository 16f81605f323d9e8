import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Failure, Result } from './api/client';
import { navigationCount } from './router';

/**
 * The pages' shared pieces: a page frame (title, heading that takes focus after a navigation), request state
 * (loading, error with the API's words and a retry), buttons that say they are busy, secrets shown once with a copy
 * button, and formatting. Class names are styles.css's.
 */

const APP_NAME = 'Agent Platform';

/**
 * One page's frame: sets `document.title`, draws the `h1` and moves focus to it after an in-app navigation (screen
 * readers announce the new page; keyboard users continue from its top).
 */
export function Page(props: {
  title: string;
  /** What the h1 shows, when richer than the title. */
  heading?: ComponentChildren;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  /** Above the heading: a way back. */
  back?: ComponentChildren;
  wide?: boolean;
  children?: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · ${APP_NAME}`;
  }, [props.title]);
  useEffect(() => {
    if (navigationCount() > 0) heading.current?.focus({ preventScroll: true });
  }, []);
  return (
    <div class={`page${props.wide ? ' page-wide' : ''}`}>
      {props.back && <div class="page-back">{props.back}</div>}
      <header class="page-header">
        <div class="page-heading">
          <h1 ref={heading} tabIndex={-1} id="page-title">
            {props.heading ?? props.title}
          </h1>
          {props.description && <p class="page-description">{props.description}</p>}
        </div>
        {props.actions && <div class="page-actions">{props.actions}</div>}
      </header>
      {props.children}
    </div>
  );
}

/** A titled block of a page. */
export function Panel(props: {
  title?: ComponentChildren;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  tone?: 'danger';
  children?: ComponentChildren;
  id?: string;
}) {
  const titleId = props.id ? `${props.id}-title` : undefined;
  return (
    <section class={`panel${props.tone ? ` panel-${props.tone}` : ''}`} id={props.id} aria-labelledby={titleId}>
      {(props.title || props.actions) && (
        <div class="panel-header">
          <div>
            {props.title && <h2 id={titleId}>{props.title}</h2>}
            {props.description && <p class="panel-description">{props.description}</p>}
          </div>
          {props.actions && <div class="panel-actions">{props.actions}</div>}
        </div>
      )}
      {props.children}
    </section>
  );
}

export function Notice(props: { children: ComponentChildren; tone?: 'error' | 'warning' | 'info' | 'success' }) {
  const tone = props.tone ?? 'info';
  return (
    <div class={`notice notice-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** A request under way: visible, and announced politely. */
export function Loading(props: { label?: string; inline?: boolean }) {
  return (
    <div class={props.inline ? 'loading loading-inline' : 'loading'} role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      <span>{props.label ?? 'Loading…'}</span>
    </div>
  );
}

/** A request that failed: the API's own words, and a way to try again. */
export function ErrorBox(props: { failure: Failure; onRetry?: () => void; title?: string }) {
  const { failure } = props;
  return (
    <div class="notice notice-error error-box" role="alert">
      <div>
        {props.title && <strong class="error-title">{props.title}</strong>}
        <span>{describeFailure(failure)}</span>
      </div>
      {props.onRetry && (
        <button type="button" class="btn btn-secondary btn-small" onClick={props.onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** The API's message, with the wait when it said how long (429 Retry-After). */
export function describeFailure(failure: Failure): string {
  if (failure.code === 'rate_limited' || failure.status === 429) {
    return `${failure.message}${failure.retryAfter ? ` Try again in ${failure.retryAfter} s.` : ''}`;
  }
  if (failure.status === 403) return failure.message || 'Your role may not do this.';
  return failure.message;
}

export type Resource<T> =
  { state: 'loading'; data?: T } | { state: 'error'; failure: Failure; data?: T } | { state: 'ready'; data: T };

/**
 * Reads something when the page opens (and when `deps` change): `reload` reads again (keeping what is shown while it
 * does), `set` changes the shown data after a write. A result that arrives after a newer request, or after the page
 * is gone, is dropped.
 */
export function useResource<T>(load: () => Promise<Result<T>>, deps: unknown[] = []) {
  const [resource, setResource] = useState<Resource<T>>({ state: 'loading' });
  const [refreshing, setRefreshing] = useState(false);
  const sequence = useRef(0);
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );

  async function run(keep: boolean) {
    const mine = ++sequence.current;
    if (keep) setRefreshing(true);
    else setResource({ state: 'loading' });
    const res = await load();
    if (!alive.current || mine !== sequence.current) return;
    setRefreshing(false);
    if (res.ok) setResource({ state: 'ready', data: res.value });
    else setResource((prev) => ({ state: 'error', failure: res, data: keep ? prev.data : undefined }));
  }

  useEffect(() => {
    void run(false);
  }, deps);

  return {
    ...resource,
    resource,
    refreshing,
    /** Reads again; what is on screen stays until the answer comes. */
    reload: () => void run(true),
    /** Reads again from a blank state (after an error). */
    retry: () => void run(false),
    set: (update: (data: T) => T) =>
      setResource((prev) => (prev.data === undefined ? prev : { state: 'ready', data: update(prev.data) })),
  };
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

/** Draws a resource: its loading and error states, or `children(data)`. */
export function Loaded<T>(props: {
  resource: Resource<T>;
  retry: () => void;
  label?: string;
  children: (data: T) => ComponentChildren;
}) {
  const { resource } = props;
  if (resource.state === 'ready') return <>{props.children(resource.data)}</>;
  if (resource.state === 'error') {
    return (
      <>
        <ErrorBox failure={resource.failure} onRetry={props.retry} />
        {resource.data !== undefined && props.children(resource.data)}
      </>
    );
  }
  return <Loading label={props.label} />;
}

/**
 * A write the user started: `busy` while it runs (disable its button), `failure` when it failed. `run` returns the
 * result so the caller can go on.
 */
export function useAction() {
  const [busy, setBusy] = useState<string | false>(false);
  const [failure, setFailure] = useState<Failure | undefined>();
  async function run<T>(work: () => Promise<Result<T>>, which = 'busy'): Promise<Result<T>> {
    setBusy(which);
    setFailure(undefined);
    const res = await work();
    setBusy(false);
    if (!res.ok) setFailure(res);
    return res;
  }
  return { busy, failure, run, setFailure, clear: () => setFailure(undefined) };
}

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

/** The shortest password the API accepts (lib/limits.ts, `account.passwordMinChars`). */
export const MIN_PASSWORD = 10;

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
  const hint = props.hint !== undefined ? props.hint : props.fresh ? `At least ${MIN_PASSWORD} characters.` : undefined;
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

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children && <div class="empty-body">{props.children}</div>}
    </div>
  );
}

export function Badge(props: {
  tone?: 'neutral' | 'success' | 'warning' | 'danger' | 'info';
  children: ComponentChildren;
}) {
  return <span class={`badge badge-${props.tone ?? 'neutral'}`}>{props.children}</span>;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export const formatDateTime = (ms: number) => dateTime.format(new Date(ms));
export const formatDate = (ms: number) => dateOnly.format(new Date(ms));

/** "3 min ago", "yesterday"; exact time in a tooltip via <Time>. */
export function formatRelative(ms: number, now = Date.now()): string {
  const seconds = Math.round((ms - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour');
  if (abs < 30 * 86_400) return relative.format(Math.round(seconds / 86_400), 'day');
  return formatDate(ms);
}

export function Time(props: { ms: number; relative?: boolean }) {
  const iso = new Date(props.ms).toISOString();
  return (
    <time dateTime={iso} title={formatDateTime(props.ms)}>
      {props.relative ? formatRelative(props.ms) : formatDateTime(props.ms)}
    </time>
  );
}

export const formatNumber = (n: number) => n.toLocaleString();
