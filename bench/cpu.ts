import { readFileSync, readdirSync } from 'node:fs';

/* What the platform's processes and threads spent: CPU by role, by kind of thread, per operation (Linux, /proc). */

/** What a process is, by a part of its command line; the first that matches (the floor's worker before Temporal). */
const ROLES: [string, string][] = [
  ['bench/floor/worker', 'floor worker'],
  ['fake-openai', 'model'],
  ['postgres', 'postgres'],
  ['temporal', 'temporal'],
  ['worker/main', 'worker'],
  ['api/server', 'api'],
  ['bench/baseline', 'baseline'],
  ['caddy', 'balancer'],
];

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** A process's parent and its CPU so far (user + system) from /proc; undefined once it is gone. */
export function processStat(pid: number | string): { ppid: number; cpuMs: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the name: state, ppid, …, utime (12th), stime (13th), cutime, cstime.
    return { ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** Milliseconds of CPU a process has used so far; undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  return processStat(pid)?.cpuMs;
}

/**
 * What a thread of a Node process does, by its name (Linux's `comm`): its main thread (the event loop), the Temporal
 * SDK core's threads (tokio's, and the one that runs workflows' state machines), or Node's unnamed ones — V8's
 * platform threads (GC, compilers) and worker threads such as the SDK's workflow thread, which Node 20 cannot name.
 * An unnamed thread carries the name of the thread that made it: the main thread's, which is the executable's name
 * (`node`, but not on every machine: `nodejs` on some) or a `process.title` set before the thread was made.
 */
export function threadKind(name: string, isMain: boolean, mainName = 'node'): string {
  if (isMain) return 'main';
  if (name.startsWith('tokio-runtime')) return 'sdk core';
  if (name.startsWith('workflow-proces')) return 'sdk core workflows';
  if (name === 'node' || name === mainName) return 'V8 and workflow threads';
  return 'other threads';
}

/** CPU milliseconds so far of each kind of thread (threadKind) of a process; empty once it is gone. */
export function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  let mainName: string | undefined;
  try {
    mainName = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const kind = threadKind(name, tid === String(pid), mainName);
      out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** This process and every process under it, each with its role (ROLES) and its CPU so far. Linux only. */
function platformProcesses(): { pid: number; role: string; cpuMs: number }[] {
  const procs: { pid: number; ppid: number; cpuMs: number; cmd: string }[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  for (const pid of pids) {
    const stat = processStat(pid);
    if (!stat) continue; // gone meanwhile
    try {
      procs.push({ pid: Number(pid), ...stat, cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  const children = new Map<number, typeof procs>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: { pid: number; role: string; cpuMs: number }[] = [];
  const walk = (pid: number, inherited?: string) => {
    for (const p of children.get(pid) ?? []) {
      const role = inherited ?? ROLES.find(([part]) => p.cmd.includes(part))?.[1];
      out.push({ pid: p.pid, role: role ?? 'other', cpuMs: p.cpuMs });
      walk(p.pid, role);
    }
  };
  const self = procs.find((p) => p.pid === process.pid);
  if (self) out.push({ pid: self.pid, role: 'load generator + fake LLM', cpuMs: self.cpuMs });
  walk(process.pid);
  return out;
}

/**
 * CPU time used so far by this process and every process under it (the platform's Postgres, Temporal dev server,
 * worker and API), grouped by what they are, in milliseconds. Linux only (reads /proc); elsewhere, empty.
 */
export function cpuByRole(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of platformProcesses()) out[p.role] = (out[p.role] ?? 0) + p.cpuMs;
  return out;
}

/** The platform's Node processes (the worker, the API, the floor's worker): what is read by thread and by event loop. */
function nodeProcesses() {
  return platformProcesses().filter((p) => ['worker', 'api', 'floor worker'].includes(p.role));
}

/**
 * The CPU of the platform's Node processes (the worker, the API, the floor's worker) by kind of thread (threadKind),
 * as `worker: main`, `worker: sdk core`…, in milliseconds so far: what a process's CPU went to, the event loop or
 * the threads beside it.
 */
export function cpuByThread(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of nodeProcesses()) {
    for (const [kind, ms] of Object.entries(threadCpuMs(p.pid)))
      out[`${p.role}: ${kind}`] = (out[`${p.role}: ${kind}`] ?? 0) + ms;
  }
  return out;
}

/** How many times a process's main thread has gone to sleep so far (its voluntary context switches); 0 once it is gone. */
export function mainThreadSleeps(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0; // gone meanwhile
  }
}

/**
 * How many times the event loops of the worker and of the API have gone to sleep so far (mainThreadSleeps, summed
 * over the processes of a role): each is a wake-up to come, with the poll, the switch and the loop's phases it costs
 * whatever it then handles. Linux only; elsewhere, empty.
 */
export function eventLoopSleeps(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of nodeProcesses()) out[p.role] = (out[p.role] ?? 0) + mainThreadSleeps(p.pid);
  return out;
}

/** Per operation, by key, between two readings: CPU milliseconds (`cpuByRole()`, `cpuByThread()`) or counts. */
export function cpuPerOperation(
  before: Record<string, number>,
  after: Record<string, number>,
  operations: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.keys(after)
      .filter((k) => after[k] - (before[k] ?? 0) > 0)
      .map((k) => [k, Math.round(((after[k] - (before[k] ?? 0)) / operations) * 1000) / 1000]),
  );
}
