import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type Db, createDb } from '../lib/db';
import type { RecordedRequest } from '../test/support/fake-openai';
import { type StoredMessage, compareWithTranscript } from './stream-integrity';
import { cpuByRole, cpuByThread, eventLoopSleeps, cpuPerOperation } from './cpu';
import { type StopOptions } from './data-dir';
import { benchOptions, summarize, visitorsTakingTurns } from './measure';
import {
  FAULTS,
  type FaultKind,
  type InjectFault,
  benchBot,
  liftRateLimits,
  startBenchCluster,
  startBenchStack,
} from './stack';
import { startUserPath } from './user-path';
import { type Turn, streamingVisitors, visitorAddress, writeKnowledge } from './load-visitors';
import { type Fault, databaseWork, faultOutcome, machineTicks, perTurn, runFloor, splitAtModel } from './load-readings';

const HELP = `Usage: npm run bench -- load [--visitors 20,150,300] [--seconds 40] [--warmup 10] [--workers 1] [--cluster N]
                             [--user-path] [--addresses N]
                             [--first-ms 400] [--total-ms 2000] [--piece 4] [--chars 480] [--read-ms 1000]
                             [--read-jitter 0.5] [--knowledge 0] [--floor]
                             [--fault worker-kill|worker-deploy|postgres|temporal|api-kill] [--fault-at S]
                             [--fault-for 10]

The load the platform exists for: many visitors at once on a model that takes seconds. Each visitor streams a
message (POST /v1/api/chat/stream, every message different so no answer cache stands in), reads the answer for
--read-ms on average (each reading between (1 - jitter) and (1 + jitter) times it, so visitors who began together
drift apart as people do; --read-jitter 0 keeps them in step, every turn in a burst of all of them), and sends the
next. The fake model is paced like a real one: the first piece --first-ms after the
request, the last at --total-ms, pieces of --piece characters, answers of about --chars characters.
--knowledge N gives the agent N knowledge sources (about 120 fragments each) and each message a question about
them, so every turn's retrieval ranks real fragments (without it the agent has no knowledge base).

At each number of visitors, all of them send their first message in the same second (a burst of new
conversations), then run for --warmup seconds, then --seconds are measured:
  turns/s            completed turns, against the ideal (visitors / (total-ms + read-ms))
  first fragment     time to the first delta frame, over the model's --first-ms (p50, p99); the time before the
                     model split by hop (to the API's update, to the turn's start in the worker, to the model), and
                     the time from the model's first piece to the visitor
  end                time to the end frame, over the model's --total-ms (p50, p99)
  burst              the first fragment of the very first messages, over the model, and its split by hop; the CPU
                     from the burst's start until every first turn ended, per first turn (burst_cpu_ms_per_turn:
                     with --read-ms longer than the burst, a new conversation's first turn alone)
  CPU per turn       milliseconds of CPU per completed turn, by process, and how idle the machine was; the worker's
                     and the API's also by thread (cpu_ms_per_turn_by_thread): the event loop (main), the SDK
                     core's threads, and Node's unnamed ones (V8's GC and compilers, the SDK's workflow thread);
                     and how often their event loops woke, per turn (event_loop_wakeups_per_turn)
  database per turn  transactions, row writes by table, and Postgres's CPU by whom it served (cpu_ms:<the
                     client's application name>: the worker, the API, the stream listener; or a background process)
  floor              with --floor, after each level: npm run bench -- floor at the same load (a bare workflow's
                     update and local activity, the least a turn costs through Temporal) and the platform's CPU
                     per turn over it: the machine's hour moves both, so compare the difference across runs; and
                     the platform's update -> turn start over the floor's update -> local activity (p50, p99),
                     steady and in the burst

  stream integrity   every turn's streamed text against the answer its conversation stored: answered turns whose
                     text differs must be 0; turns with an error frame, and whether an answer was stored after all
  fault              with --fault, --fault-at S seconds into the measured window (a third of it by default):
                     worker-kill kills a worker (SIGKILL) and starts a new one at once, as a supervisor would;
                     worker-deploy starts a new worker first, then stops the old (SIGTERM), as a rolling deploy does;
                     postgres stops the platform's database for --fault-for seconds and starts it again, temporal
                     Temporal (the dev server, its history then in a file so its workflows outlive it; with
                     --cluster N the real server's four services); api-kill, with --cluster N only, kills the first
                     API replica behind the balancer and starts it again (worker-deploy: without --cluster only).
                     Reported: how the turns then in flight ended (answered and how late over the model, error
                     frames by code, cut, failed) and how long until the part was back

--user-path measures what a user runs: \`npm start\` as shipped (scripts/launch.sh: setup, then the embedded Postgres, the
Temporal dev server with its history in a file, a worker, the API), in a data folder of its own on free ports, started
with this shell's environment (so \`NODE_ENV=production LOG_LEVEL=warn npm run bench -- load --user-path\` is that user's
platform); the model (test/support/fake-openai.ts) in a process of its own (its CPU is the model's); each visitor from
a loopback address of its own (127.0.x.y: the whole 127.0.0.0/8 is loopback on Linux), as a site's visitors are; the
rate limits in force as configured (the contract's unless RATE_LIMIT_* is set: one visitor stays well within them). The
process npm start leaves in the foreground (scripts/start.ts, which relays its parts' output) shows as "other".
--addresses N spreads the visitors over N loopback addresses instead (1: all from one, as without --user-path; then
set RATE_LIMIT_DIALOGUE for the load). Without --user-path every limit is lifted by a trigger on rate_windows.

--workers 2 starts a second worker on the same task queue. Starts its own platform (as the tests do): the Temporal dev
server, one API — or with --cluster N the production shape (npm run cluster: a real Temporal server, N API replicas
behind the balancer, Caddy with deploy/Caddyfile, whose CPU is reported as the balancer's, not the platform's).
Results: bench/results/load.json; a run with failed turns also keeps its processes' logs in
bench/results/load-failed-logs/.`;

/** Where a run whose turns failed leaves its processes' logs (bench/results is not in git). */
const FAILED_RUN_LOGS = path.join(__dirname, 'results', 'load-failed-logs');

/** The command line, read once. */
function loadOptions(arg: (name: string, fallback: string) => string) {
  const seconds = Number(arg('--seconds', '40'));
  const userPath = process.argv.includes('--user-path');
  const o = {
    levels: arg('--visitors', '20,150,300').split(',').map(Number),
    seconds,
    warmup: Number(arg('--warmup', '10')),
    workers: Number(arg('--workers', '1')),
    firstMs: Number(arg('--first-ms', '400')),
    totalMs: Number(arg('--total-ms', '2000')),
    piece: Number(arg('--piece', '4')),
    chars: Number(arg('--chars', '480')),
    readMs: Number(arg('--read-ms', '1000')),
    jitter: Number(arg('--read-jitter', '0.5')),
    replicas: Number(arg('--cluster', '0')),
    withFloor: process.argv.includes('--floor'),
    knowledgeSources: Number(arg('--knowledge', '0')),
    fault: arg('--fault', '') as FaultKind | '',
    faultAt: Number(arg('--fault-at', String(Math.round(seconds / 3)))),
    faultFor: Number(arg('--fault-for', '10')),
    userPath,
    addresses: Number(arg('--addresses', userPath ? '0' : '1')),
  };
  if (o.userPath && (o.replicas || o.workers > 1 || o.fault)) {
    throw new Error('--user-path runs npm start as shipped: one API, one worker, no --cluster, --workers or --fault');
  }
  const shape = o.replicas ? 'cluster' : 'single';
  if (o.fault && !(FAULTS[shape] as readonly string[]).includes(o.fault)) {
    throw new Error(
      `--fault: "${o.fault}" is not one of ${FAULTS[shape].join(', ')} (${o.replicas ? 'with' : 'without'} --cluster)`,
    );
  }
  return o;
}
type LoadOptions = ReturnType<typeof loadOptions>;

/** The platform under load, whichever shape: its address, settings, the model's record, faults, and its end. */
interface LoadStack {
  url: string;
  env: Record<string, string>;
  /** What the model has received so far; forgotten after each level (`forget`). */
  modelRequests(): Promise<RecordedRequest[]>;
  forget(): Promise<void>;
  injectFault: InjectFault;
  stop: (opts?: StopOptions) => Promise<void>;
}

/** npm start as shipped (--user-path), the production shape (--cluster N), or the benchmark's own stack. */
async function startLoadStack(o: LoadOptions): Promise<LoadStack> {
  if (o.userPath) {
    const user = await startUserPath();
    return {
      url: user.url,
      env: user.env,
      modelRequests: () => user.model.requests(),
      forget: () => user.model.reset(),
      injectFault: () => Promise.reject(new Error('no --fault with --user-path')),
      stop: user.stop,
    };
  }
  const own = o.replicas
    ? await startBenchCluster({ apis: o.replicas, workers: o.workers })
    : await startBenchStack({ persistTemporal: o.fault === 'temporal', workers: o.workers }).then((single) => ({
        url: single.platform.apiUrl,
        env: single.platform.env,
        fake: single.fake,
        injectFault: single.injectFault,
        stop: single.stop,
      }));
  return { ...own, modelRequests: async () => own.fake.requests, forget: async () => undefined };
}

/** What a level's measurement reads before and after its window, to divide by the turns completed in it. */
async function readings(db: Db) {
  return {
    at: performance.now(),
    cpu: cpuByRole(),
    threads: cpuByThread(),
    sleeps: eventLoopSleeps(),
    ticks: machineTicks(),
    db: await databaseWork(db),
  };
}

interface Run {
  o: LoadOptions;
  stack: LoadStack;
  db: Db;
  visitors: ReturnType<typeof streamingVisitors>;
}

/**
 * One level: every visitor's first message at once (the burst), the warm-up, then the measured window (with the
 * fault, if any, a third of the way in). Returns the turns, the sessions and what was read around the window.
 */
async function runLevel({ o, stack, db, visitors }: Run, count: number) {
  const turns: Turn[] = [];
  visitors.state.streamed = [];
  const t0 = performance.now();
  // What the burst costs: the CPU from its start until every first turn has ended (with a --read-ms longer than
  // the burst, nothing else runs meanwhile), per first turn.
  const burstCpuBefore = cpuByRole();
  let burstCpuAfter: Record<string, number> | undefined;
  let firstsEnded = 0;
  const sessions = Array.from({ length: count }, () => randomUUID());
  const audience = visitorsTakingTurns(
    count,
    async (i, first) => {
      const startedAt = performance.now();
      try {
        turns.push({ startedAt, ...(await visitors.streamTurn(sessions[i], i)), first });
      } finally {
        if (first && ++firstsEnded === count) burstCpuAfter = cpuByRole();
      }
    },
    { readMs: o.readMs, jitter: o.jitter },
  );
  await sleep(o.warmup * 1000);
  // The load generator's own lag: when its event loop is late, so are its requests and its clock.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const before = await readings(db);
  let faultRow: Fault | undefined;
  if (o.fault) {
    await sleep(o.faultAt * 1000);
    const affected = [...visitors.inFlight];
    const faultedAt = performance.now();
    await stack.injectFault(o.fault, o.faultFor * 1000);
    faultRow = { kind: o.fault, atS: o.faultAt, affected, backAfterMs: performance.now() - faultedAt };
    await sleep(Math.max(0, before.at + o.seconds * 1000 - performance.now()));
  } else {
    await sleep(o.seconds * 1000);
  }
  const after = await readings(db);
  loopDelay.disable();
  await audience.stop();
  const burst = { cpuBefore: burstCpuBefore, cpuAfter: burstCpuAfter };
  return { t0, turns, sessions, errors: audience.errors, before, after, loopDelay, faultRow, burst };
}

/** A level's row: rates, the first fragment and the end over the model, the hops, CPU, the database, integrity. */
async function levelRow(run: Run, count: number, level: Awaited<ReturnType<typeof runLevel>>) {
  const { o, stack, db, visitors } = run;
  const { turns, before, after, loopDelay } = level;
  // What every visitor read against what the platform kept, turn by turn.
  const transcript = await db.query<StoredMessage>(
    `SELECT session_id, author, text FROM messages WHERE session_id = ANY($1::text[]) ORDER BY session_id, seq`,
    [level.sessions],
  );
  const integrity = compareWithTranscript(visitors.state.streamed, transcript.rows);
  const received = await stack.modelRequests();
  await stack.forget();
  // The very first messages, sent in the same second: the burst of new conversations.
  const burst = turns.filter((t) => t.first && t.startedAt - level.t0 < 1000);
  // Turns that ended inside the measured window.
  const inWindow = turns.filter((t) => t.startedAt + t.endMs >= before.at && t.startedAt + t.endMs < after.at);
  const n = Math.max(1, inWindow.length);
  const rate = inWindow.length / ((after.at - before.at) / 1000);
  const ideal = count / ((o.totalMs + o.readMs) / 1000);
  const over = (xs: number[], model: number) => summarize(xs.map((x) => x - model));
  const cpu = cpuPerOperation(before.cpu, after.cpu, n);
  const platformCpu = ['worker', 'api', 'temporal', 'postgres'].reduce((a, k) => a + (cpu[k] ?? 0), 0);
  const busy = after.ticks.busy - before.ticks.busy;
  const total = after.ticks.total - before.ticks.total;
  const shape = o.userPath
    ? `npm start as shipped${process.env.NODE_ENV ? ` (NODE_ENV=${process.env.NODE_ENV})` : ''}, model in its own process`
    : o.replicas
      ? `cluster: real Temporal server, ${o.replicas} API replicas`
      : 'dev server, one API';
  const { cpuBefore: burstBefore, cpuAfter: burstAfter } = level.burst;
  return {
    visitors: count,
    workers: o.workers,
    shape,
    client_addresses: o.addresses || count,
    turns_per_s: Math.round(rate * 10) / 10,
    ideal_turns_per_s: Math.round(ideal * 10) / 10,
    of_ideal: `${Math.round((rate / ideal) * 100)} %`,
    first_fragment_over_model_ms: over(
      inWindow.map((t) => t.firstMs),
      o.firstMs,
    ),
    end_over_model_ms: over(
      inWindow.map((t) => t.endMs),
      o.totalMs,
    ),
    burst_first_fragment_over_model_ms: over(
      burst.map((t) => t.firstMs),
      o.firstMs,
    ),
    ...(await splitAtModel(received, db, inWindow, o.firstMs)),
    burst_hops_ms: await splitAtModel(received, db, burst, o.firstMs),
    burst_cpu_ms_per_turn: burstAfter ? cpuPerOperation(burstBefore, burstAfter, count) : null,
    cpu_ms_per_turn: cpu,
    platform_cpu_ms_per_turn: Math.round(platformCpu * 10) / 10,
    cpu_ms_per_turn_by_thread: cpuPerOperation(before.threads, after.threads, n),
    event_loop_wakeups_per_turn: cpuPerOperation(before.sleeps, after.sleeps, n),
    machine_idle: total ? `${Math.round((1 - busy / total) * 100)} %` : 'unknown',
    load_generator_lag_ms: {
      p50: Math.round(loopDelay.percentile(50) / 1e5) / 10,
      p99: Math.round(loopDelay.percentile(99) / 1e5) / 10,
      max: Math.round(loopDelay.max / 1e5) / 10,
    },
    database_per_turn: perTurn(before.db, after.db, inWindow.length),
    errors: level.errors.length,
    ...(level.errors.length ? { first_error: level.errors[0] } : {}),
    stream_integrity: integrity,
    ...(level.faultRow ? { fault: faultOutcome(level.faultRow, visitors.state.streamed, turns, o.totalMs) } : {}),
    platformCpu,
  };
}

/** The floor at the same load, right after: the machine's hour shows in both, so the difference is comparable. */
async function floorAtSameLoad(o: LoadOptions, count: number, platformCpu: number, row: Record<string, unknown>) {
  const floor = await runFloor([
    ...['--visitors', String(count), '--seconds', String(o.seconds), '--warmup', String(o.warmup)],
    ...['--total-ms', String(o.totalMs), '--read-ms', String(o.readMs), '--read-jitter', String(o.jitter)],
    ...['--chars', String(o.chars)],
  ]);
  // The platform's update -> turn start (the update sent, the turn's first statement) beside the floor's update ->
  // local activity: what the platform adds on the way to its worker, steady and in the burst.
  type Summary = ReturnType<typeof summarize>;
  const platformHop = row.update_to_turn_start_ms as Summary | undefined;
  const burstHop = (row.burst_hops_ms as { update_to_turn_start_ms?: Summary } | undefined)?.update_to_turn_start_ms;
  const minus = (a: Summary | undefined, b: Summary) =>
    a?.p50 != null && b.p50 != null && a.p99 != null && b.p99 != null
      ? { p50: Math.round((a.p50 - b.p50) * 10) / 10, p99: Math.round((a.p99 - b.p99) * 10) / 10 }
      : null;
  return {
    floor: {
      cpu_ms_per_update: floor.cpu_ms_per_update,
      cpu_ms_per_turn: floor.floor_cpu_ms_per_turn,
      update_over_model_ms: floor.update_over_model_ms,
      update_to_activity_start_ms: floor.update_to_activity_start_ms,
      burst_update_to_activity_start_ms: floor.burst_update_to_activity_start_ms,
    },
    platform_cpu_over_floor_ms: Math.round((platformCpu - floor.floor_cpu_ms_per_turn) * 10) / 10,
    update_to_turn_start_over_floor_ms: minus(platformHop, floor.update_to_activity_start_ms),
    burst_update_to_turn_start_over_floor_ms: minus(burstHop, floor.burst_update_to_activity_start_ms),
  };
}

function writeResults(o: LoadOptions, results: Record<string, unknown>[]): void {
  const out = {
    benchmark: 'load',
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
    model: { first_ms: o.firstMs, total_ms: o.totalMs, piece_chars: o.piece, answer_chars: o.chars },
    read_ms: o.readMs,
    targets:
      '300 visitors >= 90 % of ideal, first fragment <= 100 ms p50 / <= 500 ms p99 over the model; ' +
      'a burst of 300 new conversations: first fragment <= 1 s p50 / <= 2 s p99 over the model',
    results,
  };
  const name = `load${o.userPath ? '-user-path' : ''}${o.replicas ? `-cluster-${o.replicas}` : ''}${o.workers > 1 ? `-${o.workers}-workers` : ''}`;
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  writeFileSync(path.join(__dirname, 'results', `${name}.json`), JSON.stringify(out, null, 2));
}

/** Failed turns: the runs' records say why (and the processes' logs, kept by the stack's stop). */
async function reportFailedRuns(db: Db): Promise<void> {
  const runs = await db
    .query<{ error_code: string | null; error: string | null; n: number }>(
      `SELECT error_code, error, count(*)::int AS n FROM runs WHERE status = 'failed'
        GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
    )
    .catch(() => ({ rows: [] }));
  for (const r of runs.rows) console.error(`load: ${r.n} failed run(s): ${r.error_code}: ${r.error}`);
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const o = loadOptions(arg);
  const stack = await startLoadStack(o);
  const db = createDb(stack.env.DATABASE_URL, { max: 2 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const results: Record<string, unknown>[] = [];
  try {
    const bot = await benchBot(db, stack.env.SECRET_ENCRYPTION_KEY);
    // The bot's model is the paced fake (the bench stack allows the fake's models on every plan).
    await db.query(`UPDATE bots SET model = $2 WHERE id = $1`, [
      bot.bot_id,
      `fake-pace-${o.firstMs}-${o.totalMs}-${o.piece}`,
    ]);
    // The user path keeps the limits in force (one visitor is far within them); else they are lifted.
    if (!o.userPath) await liftRateLimits(db);
    await writeKnowledge(db, bot.bot_id, o.knowledgeSources);
    const visitors = streamingVisitors({
      api: stack.url,
      secretKey: bot.keys.secret_key,
      agent,
      chars: o.chars,
      knowledgeSources: o.knowledgeSources,
      addressOf: (visitor) => visitorAddress(visitor, o.addresses),
    });
    const run: Run = { o, stack, db, visitors };
    // Warm up: JIT, pools, workflow caches.
    await Promise.all(Array.from({ length: 8 }, (_, i) => visitors.streamTurn(randomUUID(), i)));
    for (const count of o.levels) {
      const { platformCpu, ...row } = await levelRow(run, count, await runLevel(run, count));
      await sleep(3000); // let the last turns' work settle before the next level
      if (o.withFloor) Object.assign(row, await floorAtSameLoad(o, count, platformCpu, row));
      results.push(row);
      console.log(JSON.stringify(row));
    }
    writeResults(o, results);
  } finally {
    agent.destroy();
    const failed = results.some((row) => Number(row.errors) > 0);
    if (failed) await reportFailedRuns(db);
    await db.end();
    await stack.stop(failed ? { keepLogsIn: FAILED_RUN_LOGS } : {});
    if (failed) console.error(`load: some turns failed; the processes' logs are in ${FAILED_RUN_LOGS}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
