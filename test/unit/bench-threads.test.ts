import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mainThreadSleeps, threadCpuMs, threadKind } from '../../bench/cpu';

/** A child running `script` under `command`, and the next line it prints. */
function child(command: string, script: string) {
  const proc = spawn(command, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return { proc, nextLine: async () => (await lines.next()).value as string };
}

describe("the load benchmark's CPU by thread", () => {
  it('names the kinds of thread a worker process has', () => {
    expect(threadKind('node', true)).toBe('main');
    expect(threadKind('tokio-runtime-w', false)).toBe('sdk core');
    expect(threadKind('workflow-proces', false)).toBe('sdk core workflows');
    expect(threadKind('node', false)).toBe('V8 and workflow threads');
    expect(threadKind('libuv-worker', false)).toBe('other threads');
    // Unnamed threads carry the main thread's name, which is not `node` everywhere.
    expect(threadKind('nodejs', false, 'nodejs')).toBe('V8 and workflow threads');
    expect(threadKind('nodejs', false)).toBe('other threads');
  });

  // Linux's /proc, as everything the benchmarks measure (they run where the platform's tests run). The process is Node
  // started under another name (`nodejs`, as some machines install it), so its threads are not called `node`.
  it("splits a process's CPU between its main thread and a worker thread that is busy", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-threads-'));
    const nodejs = join(dir, 'nodejs');
    symlinkSync(process.execPath, nodejs);
    // A worker thread burns 300 ms of its own CPU (30 ticks of /proc's clock, however loaded the machine) while the main
    // thread waits; the child says when it starts and when the thread is done, and the thread stays until the child
    // ends (its CPU leaves /proc with it).
    const { proc, nextLine } = child(
      nodejs,
      `const { Worker } = require('node:worker_threads');
         console.log('ready');
         process.stdin.once('data', () => {
           const w = new Worker(\`
             const ticks = () => require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0);
             const start = ticks();
             const deadline = Date.now() + 10000; // a bound, so that a /proc that never counts fails the test, not hangs it
             while (ticks() - start < 30 && Date.now() < deadline) for (let i = 0; i < 1e5; i++);
             require('node:worker_threads').parentPort.postMessage(1);
             setInterval(() => {}, 60000); // alive until the process ends: a thread that ended is gone from /proc\`, { eval: true });
           w.once('message', () => { console.log('done'); process.stdin.once('data', () => process.exit(0)); });
         });`,
    );
    try {
      expect(await nextLine()).toBe('ready');
      const before = threadCpuMs(proc.pid!);
      proc.stdin.write('go\n');
      expect(await nextLine()).toBe('done');
      const after = threadCpuMs(proc.pid!);
      const spent = (kind: string) => (after[kind] ?? 0) - (before[kind] ?? 0);
      expect(spent('V8 and workflow threads')).toBeGreaterThanOrEqual(200);
      expect(spent('main')).toBeLessThan(200);
    } finally {
      proc.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts a process's event loop going to sleep: each timer it waits for is one wake-up", async () => {
    // 40 timers one after another, each waited for with nothing else to do; the child says when it starts and ends.
    const { proc, nextLine } = child(
      process.execPath,
      `console.log('ready');
       process.stdin.once('data', async () => {
         for (let i = 0; i < 40; i++) await new Promise((r) => setTimeout(r, 5));
         console.log('done');
       });`,
    );
    try {
      expect(await nextLine()).toBe('ready');
      const before = mainThreadSleeps(proc.pid!);
      expect(before).toBeGreaterThan(0);
      proc.stdin.write('go\n');
      expect(await nextLine()).toBe('done');
      expect(mainThreadSleeps(proc.pid!) - before).toBeGreaterThanOrEqual(40);
    } finally {
      proc.kill();
    }
    expect(mainThreadSleeps(999_999_999)).toBe(0);
  });
});
