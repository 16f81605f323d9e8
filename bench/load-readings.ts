import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import type { createDb } from '../lib/db';
import type { RecordedRequest } from '../test/support/fake-openai';
import type { StreamedTurn } from './stream-integrity';
import { processCpuMs } from './cpu';
import { summarize } from './measure';
import type { FaultKind } from './stack';
import type { Turn } from './load-visitors';

/* What the load benchmark reads around a measured window: the machine, the database, the hops, the floor, a fault. */

/** Busy and total CPU jiffies of the whole machine, from /proc/stat (Linux). */
export function machineTicks(): { busy: number; total: number } {
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
export async function databaseWork(db: {
  query: ReturnType<typeof createDb>['query'];
}): Promise<Record<string, number>> {
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

export function perTurn(before: Record<string, number>, after: Record<string, number>, turns: number) {
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
export async function splitAtModel(
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

export interface FloorRow {
  cpu_ms_per_update: Record<string, number>;
  floor_cpu_ms_per_turn: number;
  update_over_model_ms: ReturnType<typeof summarize>;
  update_to_activity_start_ms: ReturnType<typeof summarize>;
  burst_update_to_activity_start_ms: ReturnType<typeof summarize>;
}

/** Runs `npm run bench -- floor` with these options in a process of its own (its own dev server), and reads its row. */
export function runFloor(args: string[]): Promise<FloorRow> {
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

/** A part killed during the measured window (--fault): when, the turns then in flight, how soon it was back. */
export interface Fault {
  kind: FaultKind;
  atS: number;
  affected: number[];
  backAfterMs: number;
}

/**
 * How the turns in flight when the part died ended, as their visitors saw it: answered (and how late, over the
 * model), an error frame (by code), a stream cut without its end frame, or a request that failed outright.
 */
export function faultOutcome(fault: Fault, streamed: StreamedTurn[], turns: Turn[], totalMs: number) {
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
