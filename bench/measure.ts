/* Latency summaries, concurrency, seeded randomness and the audience of the request benchmarks. */

/** Deterministic PRNG (mulberry32), so every run indexes and asks the same things. */
export function seededRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summarize(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    n: s.length,
    p50: round(percentile(s, 50)),
    p90: round(percentile(s, 90)),
    p99: round(percentile(s, 99)),
    max: round(s.at(-1) ?? NaN),
  };
}

/** Runs `run` `n` times one after the other, returning each call's latency in ms. */
export async function timedOneByOne(n: number, run: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await run(i);
    out.push(performance.now() - started);
  }
  return out;
}

/** Runs `task` `total` times with `concurrency` in flight, returning each call's latency in ms. */
export async function runConcurrent(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        await task(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

/** The command line of a benchmark: null after printing `help` for `--help`, else a reader of `--name value`. */
export function benchOptions(help: string): ((name: string, fallback: string) => string) | null {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(help);
    return null;
  }
  return (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
}

/**
 * How long a visitor reads an answer before the next message: `readMs` on average, spread evenly over ±`jitter` of
 * it. Without the spread, visitors who all began in the same second stay in step for the whole run (every answer and
 * every reading takes the same time), so each of their turns lands in a burst of all of them; people read at their
 * own pace, and drift apart after a burst.
 */
function readingTime(readMs: number, jitter: number): number {
  return readMs * (1 + jitter * (2 * Math.random() - 1));
}

/**
 * The load and floor benchmarks' audience: `count` visitors, each taking a turn, reading (readingTime), and taking
 * the next, until stopped. Every visitor's first turn goes at once: the burst of new conversations. A failed turn is
 * recorded in `errors` and the visitor goes on.
 */
export function visitorsTakingTurns(
  count: number,
  turn: (visitor: number, first: boolean) => Promise<void>,
  reading: { readMs: number; jitter: number },
): { errors: string[]; stop(): Promise<void> } {
  let stopAt = Infinity;
  const errors: string[] = [];
  const loops = Array.from({ length: count }, async (_, visitor) => {
    for (let first = true; performance.now() < stopAt; first = false) {
      try {
        await turn(visitor, first);
      } catch (err) {
        errors.push((err as Error).message);
      }
      await new Promise((r) => setTimeout(r, readingTime(reading.readMs, reading.jitter)));
    }
  });
  return {
    errors,
    async stop() {
      stopAt = 0;
      await Promise.all(loops);
    },
  };
}
