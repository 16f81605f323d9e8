import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { navigationCount } from '../router';

/** A page's frame and its blocks: the page (title, heading that takes focus after a navigation), panels, empty states. */

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

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children && <div class="empty-body">{props.children}</div>}
    </div>
  );
}
