import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type Db, createDb } from '../lib/db';
import { upsertSource } from '../lib/knowledge/store';
import type { RecordedRequest } from '../test/support/fake-openai';
import { type StoredMessage, type StreamedTurn, compareWithTranscript } from './stream-integrity';
import {
  FAULTS,
  type FaultKind,
  type InjectFault,
  type StopOptions,
  benchBot,
  benchOptions,
  cpuByRole,
  cpuByThread,
  eventLoopSleeps,
  processCpuMs,
  cpuPerOperation,
  liftRateLimits,
  startBenchCluster,
  startBenchStack,
  startUserPath,
  summarize,
  visitorsTakingTurns,
} from './stack';

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
                     per turn over it: the machine's hour moves both, so compare the difference across runs

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
rate limits in force as configured (the spec's unless RATE_LIMIT_* is set: one visitor stays well within them). The
process npm start leaves in the foreground (scripts/start.ts, which relays its parts' output) shows as "other".
--addresses N spreads the visitors over N loopback addresses instead (1: all from one, as without --user-path; then
set RATE_LIMIT_DIALOGUE for the load). Without --user-path every limit is lifted by a trigger on rate_windows.

--workers 2 starts a second worker on the same task queue. Starts its own platform (as the tests do): the Temporal dev
server, one API — or with --cluster N the production shape (npm run cluster: a real Temporal server, N API replicas
behind the balancer, Caddy with deploy/Caddyfile, whose CPU is reported as the balancer's, not the platform's).
Results: bench/results/load.json; a run with failed turns also keeps its processes' logs in
bench/results/load-failed-logs/.`;

interface Turn {
  /** The question's number, which the fake model sees in the prompt. */
  question: number;
  /** When the request was sent, in epoch milliseconds (the fake model's clock). */
  sentAt: number;
  startedAt: number;
  firstMs: number;
  endMs: number;
  first: boolean;
}

/** A frame of the chat stream (spec, POST /v1/api/chat/stream): told apart by which field is present. */
interface StreamFrame {
  delta?: string;
  notice?: string;
  error?: string;
  code?: string;
  done?: boolean;
}

/** Busy and total CPU jiffies of the whole machine, from /proc/stat (Linux). */
function machineTicks(): { busy: number; total: number } {
  try {
    const [line] = readFileSync('/proc/stat', 'utf8').split('\n');
    const n = line.split(/\s+/).slice(1).map(Number);
    const idle = n[3] + (n[4] ?? 0);
    const total = n.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/**
 * Transactions, row writes by table, and the CPU of Postgres's processes by whom they serve (the application name
 * of a client's connections: the worker's, the API's, the stream listener's; else the kind of background process)
 * so far: what the database did, and for whom, to divide by turns.
 */
async function databaseWork(db: { query: ReturnType<typeof createDb>['query'] }): Promise<Record<string, number>> {
  const tx = await db.query<{ n: string }>(
    `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  const tables = await db.query<{ relname: string; n: string }>(
    `SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS n FROM pg_stat_user_tables`,
  );
  const backends = await db.query<{ pid: number; serves: string }>(
    `SELECT pid, COALESCE(NULLIF(application_name, ''), backend_type) AS serves FROM pg_stat_activity`,
  );
  const cpuMs: Record<string, number> = {};
  for (const { pid, serves } of backends.rows) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) cpuMs[`cpu_ms:${serves}`] = (cpuMs[`cpu_ms:${serves}`] ?? 0) + ms;
  }
  return {
    transactions: Number(tx.rows[0].n),
    ...Object.fromEntries(tables.rows.map((r) => [`writes:${r.relname}`, Number(r.n)])),
    ...cpuMs,
  };
}

function perTurn(before: Record<string, number>, after: Record<string, number>, turns: number) {
  return Object.fromEntries(
    Object.keys(after)
      .map((k) => [k, Math.round(((after[k] - (before[k] ?? 0)) / Math.max(1, turns)) * 10) / 10] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

/**
 * Where the first fragment's overhead goes: from the visitor's request to the model receiving it (the API, Temporal,
 * the workflow, the turn's reads), and from the model's first piece to the visitor (the worker, the notification,
 * the API's frame). The fake model records when each request arrived; the prompt carries the question's number.
 * Before the model, three hops: to the API's update (HTTP, the key and conversation statements), from the update to
 * the turn's start in the worker (Temporal, the workflow task, the activation), and from there to the model (the
 * turn's first statement, the request).
 */
async function splitAtModel(
  requests: RecordedRequest[],
  db: { query: ReturnType<typeof createDb>['query'] },
  turns: Turn[],
  firstMs: number,
) {
  const received = new Map<number, number>();
  for (const r of requests) {
    const messages = (r.body?.messages ?? []) as { role: string; content: unknown }[];
    const asked = messages.filter((m) => m.role === 'user').at(-1)?.content;
    const n = typeof asked === 'string' ? /question (\d+) from/.exec(asked) : null;
    if (n && !received.has(Number(n[1]))) received.set(Number(n[1]), r.receivedAt);
  }
  // The hops before the model, from what the turn stored: the visitor message's `at` is when the API sent the update
  // (after its key, rate and conversation statements); the run's `started_at` is when the worker's turn began its
  // first statement. The same machine's clock throughout.
  const stored = await db.query<{ text: string; sent_at: string; started_at: string }>(
    `SELECT m.text, m.at AS sent_at, extract(epoch FROM r.started_at) * 1000 AS started_at
       FROM runs r JOIN messages m ON m.session_id = r.session_id AND m.author = 'visitor' AND m.text = r.input
      WHERE r.trigger_kind = 'message'`,
  );
  const hops = new Map<number, { updateAt: number; turnAt: number }>();
  for (const row of stored.rows) {
    const n = /question (\d+) from/.exec(row.text);
    if (n) hops.set(Number(n[1]), { updateAt: Number(row.sent_at), turnAt: Number(row.started_at) });
  }
  const before: number[] = [];
  const after: number[] = [];
  const [toUpdate, updateToTurn, turnToModel]: number[][] = [[], [], []];
  for (const t of turns) {
    const at = received.get(t.question);
    if (at === undefined) continue;
    before.push(at - t.sentAt);
    after.push(t.sentAt + t.firstMs - (at + firstMs));
    const hop = hops.get(t.question);
    if (!hop) continue;
    toUpdate.push(hop.updateAt - t.sentAt);
    updateToTurn.push(hop.turnAt - hop.updateAt);
    turnToModel.push(at - hop.turnAt);
  }
  return {
    request_to_model_ms: summarize(before),
    request_to_update_ms: summarize(toUpdate),
    update_to_turn_start_ms: summarize(updateToTurn),
    turn_start_to_model_ms: summarize(turnToModel),
    model_first_piece_to_client_ms: summarize(after),
  };
}

interface FloorRow {
  cpu_ms_per_update: Record<string, number>;
  floor_cpu_ms_per_turn: number;
  update_over_model_ms: ReturnType<typeof summarize>;
}

/** Runs `npm run bench -- floor` with these options in a process of its own (its own dev server), and reads its row. */
function runFloor(args: string[]): Promise<FloorRow> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'floor.ts'), ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`bench floor failed: ${err.message}\n${stderr}`));
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (!line) return reject(new Error(`bench floor printed no result:\n${stdout}${stderr}`));
        resolve(JSON.parse(line) as FloorRow);
      },
    );
  });
}

/** Where a run whose turns failed leaves its processes' logs (bench/results is not in git). */
const FAILED_RUN_LOGS = path.join(__dirname, 'results', 'load-failed-logs');

/**
 * The words of the benchmark's knowledge base: 400 made-up four-letter words (too short for the prefix matches
 * retrieval adds to longer ones), each in about one sentence in 400.
 */
const KNOWLEDGE_WORDS = Array.from(
  { length: 400 },
  (_, n) =>
    `q${[n % 26, Math.floor(n / 26) % 26, Math.floor(n / 676)].map((d) => String.fromCharCode(97 + d)).join('')}`,
);

/** A visitor's question about the knowledge base: two of its words, a different pair from one question to the next. */
function topicOf(question: number): string {
  const w = KNOWLEDGE_WORDS;
  return `where is the ${w[question % w.length]} near the ${w[(question * 7 + 3) % w.length]}?`;
}

/**
 * `--knowledge N`: N sources of about 120 fragments each (4 000 short sentences), written as the API writes them,
 * so every turn's retrieval ranks real fragments (each of a question's two words is in about ten fragments a source).
 */
async function writeKnowledge(db: Db, botId: string, sources: number): Promise<void> {
  const w = KNOWLEDGE_WORDS;
  for (let s = 0; s < sources; s++) {
    const text = Array.from({ length: 4000 }, (_, i) => `The ${w[(i * 7 + s) % w.length]} is number ${i}.`).join(' ');
    await upsertSource(db, { botId, sourceId: `bench-${s}`, text });
  }
  if (sources) await db.query('ANALYZE knowledge_fragments');
}

/**
 * The loopback address visitor `n` connects from, when the visitors are spread over `addresses` of them (0: one
 * each): 127.0.0.1, 127.0.0.2, … 127.0.0.254, 127.0.1.1, … — all loopback on Linux, so no alias is needed, and the
 * API sees each as a client of its own (its rate windows are per key and address).
 */
function visitorAddress(n: number, addresses: number): string {
  const i = addresses ? n % addresses : n;
  return `127.0.${Math.floor(i / 254)}.${1 + (i % 254)}`;
}

/** A part killed during the measured window (--fault): when, the turns then in flight, how soon it was back. */
interface Fault {
  kind: FaultKind;
  atS: number;
  affected: number[];
  backAfterMs: number;
}

/**
 * How the turns in flight when the part died ended, as their visitors saw it: answered (and how late, over the
 * model), an error frame (by code), a stream cut without its end frame, or a request that failed outright.
 */
function faultOutcome(fault: Fault, streamed: StreamedTurn[], turns: Turn[], totalMs: number) {
  const seen = new Map(streamed.map((t) => [t.question, t]));
  const ended = new Map(turns.map((t) => [t.question, t]));
  const outcomes: Record<string, number> = {};
  const late: number[] = [];
  for (const q of fault.affected) {
    const s = seen.get(q);
    const outcome = !s ? 'failed' : s.error !== undefined ? `error:${s.error}` : s.ended ? 'answered' : 'cut';
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    const t = ended.get(q);
    if (t) late.push(t.endMs - totalMs);
  }
  return {
    kind: fault.kind,
    at_s: fault.atS,
    back_after_s: Math.round(fault.backAfterMs / 100) / 10,
    turns_in_flight: fault.affected.length,
    outcomes,
    answered_end_over_model_ms: summarize(late),
  };
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const levels = arg('--visitors', '20,150,300').split(',').map(Number);
  const seconds = Number(arg('--seconds', '40'));
  const warmup = Number(arg('--warmup', '10'));
  const workers = Number(arg('--workers', '1'));
  const firstMs = Number(arg('--first-ms', '400'));
  const totalMs = Number(arg('--total-ms', '2000'));
  const piece = Number(arg('--piece', '4'));
  const chars = Number(arg('--chars', '480'));
  const readMs = Number(arg('--read-ms', '1000'));
  const jitter = Number(arg('--read-jitter', '0.5'));
  const replicas = Number(arg('--cluster', '0'));
  const withFloor = process.argv.includes('--floor');
  const knowledgeSources = Number(arg('--knowledge', '0'));
  const fault = arg('--fault', '') as FaultKind | '';
  const faultAt = Number(arg('--fault-at', String(Math.round(seconds / 3))));
  const faultFor = Number(arg('--fault-for', '10'));
  const userPath = process.argv.includes('--user-path');
  const addresses = Number(arg('--addresses', userPath ? '0' : '1'));
  if (userPath && (replicas || workers > 1 || fault)) {
    throw new Error('--user-path runs npm start as shipped: one API, one worker, no --cluster, --workers or --fault');
  }
  const shape = replicas ? 'cluster' : 'single';
  if (fault && !(FAULTS[shape] as readonly string[]).includes(fault)) {
    throw new Error(
      `--fault: "${fault}" is not one of ${FAULTS[shape].join(', ')} (${replicas ? 'with' : 'without'} --cluster)`,
    );
  }

  const stack: {
    url: string;
    env: Record<string, string>;
    /** What the model has received so far; forgotten after each level (`forget`). */
    modelRequests(): Promise<RecordedRequest[]>;
    forget(): Promise<void>;
    injectFault: InjectFault;
    stop: (opts?: StopOptions) => Promise<void>;
  } = userPath
    ? await startUserPath().then((user) => ({
        url: user.url,
        env: user.env,
        modelRequests: () => user.model.requests(),
        forget: () => user.model.reset(),
        injectFault: () => Promise.reject(new Error('no --fault with --user-path')),
        stop: user.stop,
      }))
    : await (
        replicas
          ? startBenchCluster({ apis: replicas, workers })
          : startBenchStack({ persistTemporal: fault === 'temporal', workers }).then((single) => ({
              url: single.platform.apiUrl,
              env: single.platform.env,
              fake: single.fake,
              injectFault: single.injectFault,
              stop: single.stop,
            }))
      ).then((own) => ({
        ...own,
        modelRequests: async () => own.fake.requests,
        forget: async () => undefined,
      }));
  const db = createDb(stack.env.DATABASE_URL, { max: 2 });
  const addressOf = (visitor: number) => visitorAddress(visitor, addresses);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const results: Record<string, unknown>[] = [];
  try {
    const bot = await benchBot(db, stack.env.SECRET_ENCRYPTION_KEY);
    // The bot's model is the paced fake (the bench stack allows the fake's models on every plan).
    await db.query(`UPDATE bots SET model = $2 WHERE id = $1`, [
      bot.bot_id,
      `fake-pace-${firstMs}-${totalMs}-${piece}`,
    ]);
    // The user path keeps the limits in force (one visitor is far within them); else they are lifted.
    if (!userPath) await liftRateLimits(db);
    await writeKnowledge(db, bot.bot_id, knowledgeSources);
    const api = stack.url;
    const headers = { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json' };

    let asked = 0;
    /** The turns in flight, by question number, and how every turn ended as its visitor saw it. */
    const inFlight = new Set<number>();
    let streamed: StreamedTurn[] = [];
    // The visitors' side is node:http (kept-alive connections, the body read as events): the global fetch passes
    // every read through a web stream and a promise, CPU that this machine's platform would otherwise have.
    /**
     * One streamed turn: times to the first delta and to the end frame, from the request's start. Its frames are read
     * as the spec defines them, so what the visitor read can be compared with what was stored (stream-integrity.ts);
     * an error frame, or a stream without its end frame, fails the turn.
     */
    const streamTurn = (session: string, visitor: number): Promise<Omit<Turn, 'startedAt' | 'first'>> => {
      const started = performance.now();
      const sentAt = Date.now();
      const question = ++asked;
      const body = JSON.stringify({
        session_id: session,
        message:
          `[[fake:length-${chars}]] question ${question} from ${session.slice(0, 8)}` +
          (knowledgeSources ? `: ${topicOf(question)}` : ''),
      });
      inFlight.add(question);
      const seen: StreamedTurn = { question, text: '', ended: false };
      return new Promise<Omit<Turn, 'startedAt' | 'first'>>((resolve, reject) => {
        const req = http.request(
          `${api}/v1/api/chat/stream`,
          {
            method: 'POST',
            agent,
            headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
            localAddress: addressOf(visitor),
          },
          (res) => {
            res.setEncoding('utf8');
            let buffer = '';
            if (res.statusCode !== 200) {
              res.on('data', (d: string) => (buffer += d));
              res.on('end', () => reject(new Error(`stream ${res.statusCode}: ${buffer}`)));
              return;
            }
            let first = NaN;
            let end = NaN;
            res.on('data', (d: string) => {
              buffer += d;
              for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
                const frame = buffer.slice(0, cut);
                buffer = buffer.slice(cut + 2);
                for (const line of frame.split('\n')) {
                  if (!line.startsWith('data: ')) continue;
                  let f: StreamFrame;
                  try {
                    f = JSON.parse(line.slice(6)) as StreamFrame;
                  } catch {
                    f = { error: 'a frame that is not JSON', code: 'unparsable' };
                  }
                  if (f.notice) seen.notice = true;
                  if (typeof f.delta === 'string') {
                    if (Number.isNaN(first)) first = performance.now() - started;
                    seen.text += f.delta;
                  }
                  if (f.error !== undefined && seen.error === undefined) seen.error = f.code ?? 'internal';
                  if (f.done === true) {
                    end = performance.now() - started;
                    seen.ended = true;
                  }
                }
              }
            });
            // 'close' comes after the end of the body, or when the connection broke off (then without an end frame).
            res.on('close', () => {
              streamed.push(seen);
              if (seen.error !== undefined) reject(new Error(`error frame: ${seen.error}`));
              else if (!seen.ended) reject(new Error('the stream ended without its end frame'));
              else resolve({ firstMs: first, endMs: end, question, sentAt });
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      }).finally(() => inFlight.delete(question));
    };

    // Warm up: JIT, pools, workflow caches.
    await Promise.all(Array.from({ length: 8 }, (_, i) => streamTurn(randomUUID(), i)));

    for (const visitors of levels) {
      const turns: Turn[] = [];
      streamed = [];
      const t0 = performance.now();
      // What the burst costs: the CPU from its start until every first turn has ended (with a --read-ms longer than
      // the burst, nothing else runs meanwhile), per first turn.
      const burstCpuBefore = cpuByRole();
      let burstCpuAfter: Record<string, number> | undefined;
      let firstsEnded = 0;
      // Every visitor sends their first message at once: a burst of new conversations.
      const sessions = Array.from({ length: visitors }, () => randomUUID());
      const audience = visitorsTakingTurns(
        visitors,
        async (i, first) => {
          const startedAt = performance.now();
          try {
            turns.push({ startedAt, ...(await streamTurn(sessions[i], i)), first });
          } finally {
            if (first && ++firstsEnded === visitors) burstCpuAfter = cpuByRole();
          }
        },
        { readMs, jitter },
      );
      await new Promise((r) => setTimeout(r, warmup * 1000));
      const cpuBefore = cpuByRole();
      const threadsBefore = cpuByThread();
      const sleepsBefore = eventLoopSleeps();
      const ticksBefore = machineTicks();
      // The load generator's own lag: when its event loop is late, so are its requests and its clock.
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const dbBefore = await databaseWork(db);
      const measureFrom = performance.now();
      let faultRow: Fault | undefined;
      if (fault) {
        await new Promise((r) => setTimeout(r, faultAt * 1000));
        const affected = [...inFlight];
        const faultedAt = performance.now();
        await stack.injectFault(fault, faultFor * 1000);
        faultRow = { kind: fault, atS: faultAt, affected, backAfterMs: performance.now() - faultedAt };
        await new Promise((r) => setTimeout(r, Math.max(0, measureFrom + seconds * 1000 - performance.now())));
      } else {
        await new Promise((r) => setTimeout(r, seconds * 1000));
      }
      const measureTo = performance.now();
      const cpuAfter = cpuByRole();
      const threadsAfter = cpuByThread();
      const sleepsAfter = eventLoopSleeps();
      const ticksAfter = machineTicks();
      loopDelay.disable();
      const dbAfter = await databaseWork(db);
      await audience.stop();
      const { errors } = audience;
      // What every visitor read against what the platform kept, turn by turn.
      const transcript = await db.query<StoredMessage>(
        `SELECT session_id, author, text FROM messages WHERE session_id = ANY($1::text[]) ORDER BY session_id, seq`,
        [sessions],
      );
      const integrity = compareWithTranscript(streamed, transcript.rows);
      const received = await stack.modelRequests();
      await stack.forget();

      // The very first messages, sent in the same second: the burst of new conversations.
      const burst = turns.filter((t) => t.first && t.startedAt - t0 < 1000);
      // Turns that ended inside the measured window.
      const inWindow = turns.filter((t) => t.startedAt + t.endMs >= measureFrom && t.startedAt + t.endMs < measureTo);
      const rate = inWindow.length / ((measureTo - measureFrom) / 1000);
      const ideal = visitors / ((totalMs + readMs) / 1000);
      const over = (xs: number[], model: number) => summarize(xs.map((x) => x - model));
      const cpu = cpuPerOperation(cpuBefore, cpuAfter, Math.max(1, inWindow.length));
      const platformCpu = ['worker', 'api', 'temporal', 'postgres'].reduce((a, k) => a + (cpu[k] ?? 0), 0);
      const busy = ticksAfter.busy - ticksBefore.busy;
      const total = ticksAfter.total - ticksBefore.total;
      const row = {
        visitors,
        workers,
        shape: userPath
          ? `npm start as shipped${process.env.NODE_ENV ? ` (NODE_ENV=${process.env.NODE_ENV})` : ''}, model in its own process`
          : replicas
            ? `cluster: real Temporal server, ${replicas} API replicas`
            : 'dev server, one API',
        client_addresses: addresses || visitors,
        turns_per_s: Math.round(rate * 10) / 10,
        ideal_turns_per_s: Math.round(ideal * 10) / 10,
        of_ideal: `${Math.round((rate / ideal) * 100)} %`,
        first_fragment_over_model_ms: over(
          inWindow.map((t) => t.firstMs),
          firstMs,
        ),
        end_over_model_ms: over(
          inWindow.map((t) => t.endMs),
          totalMs,
        ),
        burst_first_fragment_over_model_ms: over(
          burst.map((t) => t.firstMs),
          firstMs,
        ),
        ...(await splitAtModel(received, db, inWindow, firstMs)),
        burst_hops_ms: await splitAtModel(received, db, burst, firstMs),
        burst_cpu_ms_per_turn: burstCpuAfter ? cpuPerOperation(burstCpuBefore, burstCpuAfter, visitors) : null,
        cpu_ms_per_turn: cpu,
        platform_cpu_ms_per_turn: Math.round(platformCpu * 10) / 10,
        cpu_ms_per_turn_by_thread: cpuPerOperation(threadsBefore, threadsAfter, Math.max(1, inWindow.length)),
        event_loop_wakeups_per_turn: cpuPerOperation(sleepsBefore, sleepsAfter, Math.max(1, inWindow.length)),
        machine_idle: total ? `${Math.round((1 - busy / total) * 100)} %` : 'unknown',
        load_generator_lag_ms: {
          p50: Math.round(loopDelay.percentile(50) / 1e5) / 10,
          p99: Math.round(loopDelay.percentile(99) / 1e5) / 10,
          max: Math.round(loopDelay.max / 1e5) / 10,
        },
        database_per_turn: perTurn(dbBefore, dbAfter, inWindow.length),
        errors: errors.length,
        ...(errors.length ? { first_error: errors[0] } : {}),
        stream_integrity: integrity,
        ...(faultRow ? { fault: faultOutcome(faultRow, streamed, turns, totalMs) } : {}),
      };
      await new Promise((r) => setTimeout(r, 3000)); // let the last turns' work settle before the next level
      if (withFloor) {
        // The floor at the same load, right after: the machine's hour shows in both, so the difference is comparable.
        const floor = await runFloor([
          ...['--visitors', String(visitors), '--seconds', String(seconds), '--warmup', String(warmup)],
          ...['--total-ms', String(totalMs), '--read-ms', String(readMs), '--read-jitter', String(jitter)],
          ...['--chars', String(chars)],
        ]);
        Object.assign(row, {
          floor: {
            cpu_ms_per_update: floor.cpu_ms_per_update,
            cpu_ms_per_turn: floor.floor_cpu_ms_per_turn,
            update_over_model_ms: floor.update_over_model_ms,
          },
          platform_cpu_over_floor_ms: Math.round((platformCpu - floor.floor_cpu_ms_per_turn) * 10) / 10,
        });
      }
      results.push(row);
      console.log(JSON.stringify(row));
    }
    const out = {
      benchmark: 'load',
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      model: { first_ms: firstMs, total_ms: totalMs, piece_chars: piece, answer_chars: chars },
      read_ms: readMs,
      targets:
        '150 visitors >= 90 % of ideal, first fragment <= 100 ms p50 / <= 500 ms p99 over the model; ' +
        '300 visitors >= 80 %; platform CPU per streamed turn <= 15 ms; two workers not slower than one',
      results,
    };
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(
      path.join(
        __dirname,
        'results',
        `load${userPath ? '-user-path' : ''}${replicas ? `-cluster-${replicas}` : ''}${workers > 1 ? `-${workers}-workers` : ''}.json`,
      ),
      JSON.stringify(out, null, 2),
    );
  } finally {
    agent.destroy();
    // Failed turns: the runs' records and the processes' logs say why (the data folder goes with the stack).
    const failed = results.some((row) => Number(row.errors) > 0);
    if (failed) {
      const runs = await db
        .query<{ error_code: string | null; error: string | null; n: number }>(
          `SELECT error_code, error, count(*)::int AS n FROM runs WHERE status = 'failed'
            GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
        )
        .catch(() => ({ rows: [] }));
      for (const r of runs.rows) console.error(`load: ${r.n} failed run(s): ${r.error_code}: ${r.error}`);
    }
    await db.end();
    await stack.stop(failed ? { keepLogsIn: FAILED_RUN_LOGS } : {});
    if (failed) console.error(`load: some turns failed; the processes' logs are in ${FAILED_RUN_LOGS}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
