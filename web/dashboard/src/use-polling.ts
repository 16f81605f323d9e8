import { useEffect, useRef } from 'preact/hooks';
import { type PollEnv, type PollOptions, type PollOutcome, type Poller, startPolling } from './poll';

/** The browser's timers and the document's visibility. */
const browser: PollEnv = {
  setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  clearTimeout: (handle) => window.clearTimeout(handle as number),
  isVisible: () => document.visibilityState === 'visible',
  onVisible: (fn) => {
    const listener = () => {
      if (document.visibilityState === 'visible') fn();
    };
    document.addEventListener('visibilitychange', listener);
    return () => document.removeEventListener('visibilitychange', listener);
  },
};

/**
 * `startPolling` for a component: polls while `enabled`, starts again when `deps` change, stops on unmount. The
 * latest `tick` is always the one called. Returns `pollNow` (read at once, e.g. after the user changed something).
 */
export function usePolling(
  tick: (stopped: () => boolean) => Promise<PollOutcome>,
  opts: PollOptions & { enabled?: boolean },
  deps: unknown[],
): () => void {
  const latest = useRef(tick);
  latest.current = tick;
  const poller = useRef<Poller | undefined>(undefined);
  const enabled = opts.enabled ?? true;
  useEffect(() => {
    if (!enabled) return;
    const p = startPolling((stopped) => latest.current(stopped), opts, browser);
    poller.current = p;
    return () => {
      p.stop();
      if (poller.current === p) poller.current = undefined;
    };
  }, [enabled, ...deps]);
  return () => poller.current?.now();
}
