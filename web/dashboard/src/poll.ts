/** Polling with no framework and no DOM but what `PollEnv` names: the hook is in use-polling.ts. */
/** What one read of a polled resource came to: read again later, read again after a back-off, or stop asking. */
export type PollOutcome = 'ok' | 'failed' | 'stop';

export interface PollOptions {
  /** Between reads that succeeded. */
  everyMs: number;
  /** After failures the wait doubles, up to this (default: no back-off beyond `everyMs`). */
  maxBackoffMs?: number;
  /** Reads only while the page is visible; a page that becomes visible again is read at once. */
  onlyWhenVisible?: boolean;
  /** The first read is someone else's (the page's own load): start with a wait (default: read at once). */
  waitFirst?: boolean;
}

/** What the poller needs of its surroundings: timers and the page's visibility (a test gives its own). */
export interface PollEnv {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  isVisible(): boolean;
  /** Calls `fn` whenever the page becomes visible; returns how to stop. */
  onVisible(fn: () => void): () => void;
}

export interface Poller {
  /** Reads now (or right after the read in flight), then on the usual schedule. */
  now(): void;
  stop(): void;
}

/**
 * Every page's polling, one way: read at once, then every `everyMs`; after a failure wait twice as long each time
 * up to `maxBackoffMs`; never two reads at once; no reads while the page is hidden if asked, and one at once when it
 * shows again; nothing after `stop`. A read still in flight when polling stops is told so (`stopped()`), so that its
 * answer, which belongs to what was polled before, is not shown.
 */
export function startPolling(
  tick: (stopped: () => boolean) => Promise<PollOutcome>,
  opts: PollOptions,
  env: PollEnv,
): Poller {
  let stopped = false;
  let timer: unknown;
  let inFlight = false;
  let again = false;
  let failures = 0;
  let waitingForVisible = false;
  const isStopped = () => stopped;

  const schedule = (ms: number) => {
    env.clearTimeout(timer);
    timer = env.setTimeout(() => {
      timer = undefined;
      if (opts.onlyWhenVisible && !env.isVisible()) waitingForVisible = true;
      else void run();
    }, ms);
  };

  async function run(): Promise<void> {
    if (stopped) return;
    if (inFlight) {
      again = true;
      return;
    }
    env.clearTimeout(timer);
    timer = undefined;
    inFlight = true;
    let outcome: PollOutcome;
    try {
      outcome = await tick(isStopped);
    } catch {
      outcome = 'failed';
    }
    inFlight = false;
    if (stopped || outcome === 'stop') return;
    failures = outcome === 'failed' ? failures + 1 : 0;
    if (again) {
      again = false;
      return run();
    }
    const backoff = failures > 0 ? opts.everyMs * 2 ** (failures - 1) : opts.everyMs;
    schedule(Math.min(backoff, Math.max(opts.everyMs, opts.maxBackoffMs ?? opts.everyMs)));
  }

  const stopVisible = opts.onlyWhenVisible
    ? env.onVisible(() => {
        if (!waitingForVisible) return;
        waitingForVisible = false;
        void run();
      })
    : () => undefined;

  if (opts.waitFirst) schedule(opts.everyMs);
  else void run();
  return {
    now: () => {
      waitingForVisible = false;
      void run();
    },
    stop: () => {
      stopped = true;
      env.clearTimeout(timer);
      stopVisible();
    },
  };
}
