import { describe, expect, it } from '@jest/globals';
import { Worker } from 'node:worker_threads';
import { threadCpuMs, threadKind } from '../../bench/stack';

describe("the load benchmark's CPU by thread", () => {
  it('names the kinds of thread a worker process has', () => {
    expect(threadKind('node', true)).toBe('main');
    expect(threadKind('tokio-runtime-w', false)).toBe('sdk core');
    expect(threadKind('workflow-proces', false)).toBe('sdk core workflows');
    expect(threadKind('node', false)).toBe('V8 and workflow threads');
    expect(threadKind('libuv-worker', false)).toBe('other threads');
  });

  // Linux's /proc, as everything the benchmarks measure (they run where the platform's tests run).
  it("splits a process's CPU between its main thread and a worker thread that is busy", async () => {
    const before = threadCpuMs(process.pid);
    // A worker thread burns 300 ms of CPU while the main thread waits.
    const worker = new Worker(
      'const end = Date.now() + 300; while (Date.now() < end); require("node:worker_threads").parentPort.postMessage(1);',
      { eval: true },
    );
    await new Promise((resolve) => worker.once('message', resolve));
    const after = threadCpuMs(process.pid);
    await worker.terminate();
    const spent = (kind: string) => (after[kind] ?? 0) - (before[kind] ?? 0);
    expect(spent('V8 and workflow threads')).toBeGreaterThanOrEqual(200);
    expect(spent('main')).toBeLessThan(200);
  });
});
