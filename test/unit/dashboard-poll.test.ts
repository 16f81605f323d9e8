import { describe, expect, it, jest } from '@jest/globals';
// The dashboard's sources are an ES module package (web/dashboard/package.json): the type from there, the code
// through Jest, which compiles it like any other TypeScript file.
import type * as Poll from '../../web/dashboard/src/poll.js' with { 'resolution-mode': 'import' };

const { startPolling } = jest.requireActual<typeof Poll>('../../web/dashboard/src/poll');

/** Timers run by hand and a page whose visibility the test sets. */
function fakeEnv() {
  let now = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const visibleListeners = new Set<() => void>();
  const env = {
    visible: true,
    setTimeout: (fn: () => void, ms: number) => {
      const id = nextId++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (id: unknown) => void timers.delete(id as number),
    isVisible: () => env.visible,
    onVisible: (fn: () => void) => {
      visibleListeners.add(fn);
      return () => void visibleListeners.delete(fn);
    },
    /** Moves the clock on, firing due timers in order; lets the reads they start settle. */
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await settle();
      }
      now = end;
    },
    show() {
      env.visible = true;
      for (const fn of visibleListeners) fn();
    },
    pending: () => timers.size,
    get now() {
      return now;
    },
  };
  return env;
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe("the dashboard's polling (web/dashboard/src/poll.ts)", () => {
  it('reads at once, then every interval, never two reads at once; a read asked for meanwhile follows the one in flight', async () => {
    const env = fakeEnv();
    const at: number[] = [];
    let release: (() => void) | undefined;
    let slow = false;
    const poller = startPolling(
      async () => {
        at.push(env.now);
        if (slow) await new Promise<void>((r) => (release = r));
        return 'ok';
      },
      { everyMs: 3000 },
      env,
    );
    await settle();
    await env.advance(6000);
    expect(at).toEqual([0, 3000, 6000]);
    slow = true;
    await env.advance(3000); // a read starts at 9000 and hangs
    poller.now();
    poller.now();
    await settle();
    expect(at).toEqual([0, 3000, 6000, 9000]);
    slow = false;
    release!();
    await settle();
    expect(at).toEqual([0, 3000, 6000, 9000, 9000]); // one more, right after, however often it was asked
    poller.stop();
    await env.advance(30_000);
    expect(at).toHaveLength(5);
    expect(env.pending()).toBe(0);
  });

  it('backs off after failures (doubling, capped) and returns to the interval after a success', async () => {
    const env = fakeEnv();
    const at: number[] = [];
    const outcomes: Poll.PollOutcome[] = ['failed', 'failed', 'failed', 'failed', 'ok', 'ok'];
    startPolling(
      async () => {
        at.push(env.now);
        return outcomes.shift() ?? 'ok';
      },
      { everyMs: 2000, maxBackoffMs: 5000 },
      env,
    );
    await settle();
    await env.advance(20_000);
    // failed at 0 → 2 s, at 2000 → 4 s, at 6000 → 5 s (capped), at 11000 → 5 s; ok at 16000 → 2 s
    expect(at.slice(0, 7)).toEqual([0, 2000, 6000, 11_000, 16_000, 18_000, 20_000]);
  });

  it('a read that throws counts as a failure; "stop" ends the polling', async () => {
    const env = fakeEnv();
    const at: number[] = [];
    const outcomes: (Poll.PollOutcome | Error)[] = [new Error('network'), 'ok', 'stop'];
    startPolling(
      async () => {
        at.push(env.now);
        const next = outcomes.shift()!;
        if (next instanceof Error) throw next;
        return next;
      },
      { everyMs: 1000, maxBackoffMs: 8000 },
      env,
    );
    await settle();
    await env.advance(60_000);
    expect(at).toEqual([0, 1000, 2000]);
    expect(env.pending()).toBe(0);
  });

  it('asked to, reads nothing while the page is hidden and reads at once when it shows again', async () => {
    const env = fakeEnv();
    const at: number[] = [];
    startPolling(
      async () => {
        at.push(env.now);
        return 'ok';
      },
      { everyMs: 1000, onlyWhenVisible: true },
      env,
    );
    await settle();
    env.visible = false;
    await env.advance(10_000);
    expect(at).toEqual([0]);
    env.show();
    await settle();
    expect(at).toEqual([0, 10_000]);
    await env.advance(1000);
    expect(at).toEqual([0, 10_000, 11_000]);
  });

  it('asked to wait first, leaves the first read to the page and starts after an interval', async () => {
    const env = fakeEnv();
    const at: number[] = [];
    startPolling(
      async () => {
        at.push(env.now);
        return 'ok';
      },
      { everyMs: 30_000, waitFirst: true },
      env,
    );
    await settle();
    expect(at).toEqual([]);
    await env.advance(60_000);
    expect(at).toEqual([30_000, 60_000]);
  });
});
