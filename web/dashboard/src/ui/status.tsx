import type { ComponentChildren } from 'preact';
import type { Failure } from '../api/client';

/** What a page says about itself: notices, a request under way, a request that failed (with a retry), badges. */

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

export function Badge(props: {
  tone?: 'neutral' | 'success' | 'warning' | 'danger' | 'info';
  children: ComponentChildren;
}) {
  return <span class={`badge badge-${props.tone ?? 'neutral'}`}>{props.children}</span>;
}
