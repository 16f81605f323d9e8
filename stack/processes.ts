import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';

/** Where the kernel's ephemeral ports begin: the local ends of outgoing connections, and what `listen(0)` gives. */
function ephemeralPortsStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) ? start : 32_768;
  } catch {
    return 32_768; // not Linux: below every common range (Linux's default starts here, IANA's and macOS's at 49152)
  }
}

const LOWEST_PORT = 10_000;
/** Ports this process handed out: two parts it starts together never get the same one. */
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A free TCP port on loopback for a part to listen on, taken below the kernel's ephemeral range. A port from that
 * range (what `listen(0)` gives) can be taken, between this check and the part's own listen, as the local end of any
 * outgoing connection: the part then dies with EADDRINUSE (seen in the benchmark, an API started after Postgres and
 * Temporal had opened their connections). Below the range only another listener can take it. `below` narrows it
 * further (a port stored as a smallint).
 */
export async function freePort(below = Infinity): Promise<number> {
  const ephemeral = ephemeralPortsStart();
  if (ephemeral <= LOWEST_PORT + 1_000) return kernelPort(); // an unusual range: no room below it
  const limit = Math.min(ephemeral, below);
  for (let tries = 0; tries < 1_000; tries++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (limit - LOWEST_PORT));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port between ${LOWEST_PORT} and ${limit} after 1000 tries`);
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The last lines each child wrote (quiet or not), and when its output ended: what an error about it quotes. */
const tails = new WeakMap<ChildProcess, { lines: string[]; closed: Promise<void> }>();
const TAIL_LINES = 15;

/**
 * A child's last lines of output, for an error that says it died (empty when it wrote nothing). A child that exited
 * may still have output in its pipes: this waits for them to close (a second at most).
 */
async function outputTail(child: ChildProcess): Promise<string> {
  const tail = tails.get(child);
  if (!tail) return '';
  await Promise.race([tail.closed, new Promise((r) => setTimeout(r, 1000).unref())]);
  return tail.lines.join('\n');
}

export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  child?: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) {
      const tail = await outputTail(child);
      throw new Error(
        `${what} exited with code ${child.exitCode} while starting${tail ? `; its last output:\n${tail}` : ''}`,
      );
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** Asks the process to stop (SIGTERM, then SIGKILL after `graceMs`) and resolves when it has exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * What a stack has started, to stop in the reverse order (the API before the worker before Temporal before Postgres).
 * A stop that fails does not keep the others from running; stopping twice stops nothing twice.
 */
export function stopList(): { add(stop: () => Promise<void>): void; stopAll(): Promise<void> } {
  const stops: (() => Promise<void>)[] = [];
  return {
    add: (stop) => void stops.push(stop),
    async stopAll() {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
      stops.length = 0;
    },
  };
}

/**
 * Children still running when this process exits without stopping them (a jest run aborted by another project's
 * failed setup, a crash of `npm start`) are killed on the way out, so no Postgres or Temporal is left behind.
 * `exit` handlers run synchronously: a signal is all there is time for.
 *
 * A process killed by a signal does not run its `exit` handlers, so a SIGINT, SIGTERM or SIGHUP that nothing else in
 * the process listens for (a benchmark stopped by `timeout`, a supervisor, `kill`) becomes an exit with the signal's
 * conventional code (128 + its number). A process that handles the signal itself (`npm start`, `npm run cluster`,
 * which stop their children gracefully) keeps it.
 */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
function killOnExit(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of running) {
      try {
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  exitOnStopSignals();
}

let stopSignalsHandled = false;
/**
 * A SIGINT, SIGTERM or SIGHUP that nothing else in the process listens for becomes an exit with the signal's
 * conventional code (128 + its number), so the process's `exit` handlers run (see above). Idempotent.
 */
export function exitOnStopSignals(): void {
  if (stopSignalsHandled) return;
  stopSignalsHandled = true;
  for (const signal of EXIT_SIGNALS) {
    process.on(signal, function exitOnSignal() {
      if (process.listeners(signal).some((l) => l !== exitOnSignal)) return;
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

/**
 * Spawns a child whose output is prefixed with its name, so `npm start` shows one readable stream. `onLine`
 * sees every line too (used to notice readiness messages).
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  opts: SpawnOptions & { quiet?: boolean; onLine?: (line: string) => void } = {},
): ManagedProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  killOnExit(child);
  const tail: string[] = [];
  tails.set(child, { lines: tail, closed: new Promise((resolve) => child.once('close', () => resolve())) });
  const pipe = (stream: NodeJS.ReadableStream | null, out: NodeJS.WriteStream) => {
    let buf = '';
    stream?.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        opts.onLine?.(line);
        tail.push(line);
        if (tail.length > TAIL_LINES) tail.shift();
        if (!opts.quiet) out.write(`[${name}] ${line}\n`);
      }
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once('exit', () => resolve());
  });
  return {
    name,
    child,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
