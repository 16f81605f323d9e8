import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Failure, Result } from '../api/client';
import { ErrorBox, Loading } from './status';

/**
 * The pages' one way to call the API and show it: a read when the page opens (`useResource`, drawn by `Loaded` with its
 * loading, error and retry), and a write the user started (`useAction`).
 */

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
