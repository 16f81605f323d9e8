/**
 * The workflow thread's deadlock guard (patches/, docs/decisions/125-workflow-thread-deadlock-guard.md). The SDK
 * puts a timeout on every call into a workflow's sandbox, and Node starts and joins a watchdog thread for each such
 * call: a measurable share of a turn's CPU. By default the worker's main thread watches the workflow thread as a whole
 * instead, and ends the process, naming the run, when a workflow holds the thread past the limit; with
 * WORKER_WORKFLOW_TIMEOUT_PER_CALL=true the SDK's own guard fails the stuck workflow task and the worker stays up.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type ManagedProcess, startProcess, waitFor } from '../../stack/processes';
import { waitUntil, useTemporalClient } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

const client = useTemporalClient();

const started: string[] = [];
afterEach(async () => {
  for (const id of started.splice(0)) {
    await client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined); // already ended
  }
});

interface SpinningWorker {
  proc: ManagedProcess;
  taskQueue: string;
  lines: string[];
  exited: Promise<number | null>;
}

/** A worker process of the test's own (test/support/spinning-worker.ts) on a task queue of its own. */
async function spinningWorker(env: Record<string, string | undefined>): Promise<SpinningWorker> {
  const taskQueue = `spin-${randomUUID()}`;
  const lines: string[] = [];
  const proc = startProcess(
    'spinning-worker',
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(__dirname, '..', 'support', 'spinning-worker.ts'),
      stackInfo().temporalAddress,
      stackInfo().namespace,
      taskQueue,
    ],
    { env: { ...process.env, ...env }, quiet: true, onLine: (line) => lines.push(line) },
  );
  const exited = new Promise<number | null>((resolve) => proc.child.once('exit', (code) => resolve(code)));
  await waitFor(
    'spinning worker',
    async () => lines.some((l) => l.includes('spinning worker started')),
    60_000,
    proc.child,
  );
  return { proc, taskQueue, lines, exited };
}

async function start(worker: SpinningWorker, spin: boolean) {
  const workflowId = `spin-${randomUUID()}`;
  started.push(workflowId);
  return client.workflow.start('spinningWorkflow', { workflowId, taskQueue: worker.taskQueue, args: [spin] });
}

describe("the workflow thread's deadlock guard", () => {
  describe('by default (the thread watched as a whole)', () => {
    let worker: SpinningWorker;
    beforeAll(async () => {
      worker = await spinningWorker({ WORKER_WORKFLOW_TIMEOUT_PER_CALL: undefined });
    }, 90_000);
    afterAll(() => worker?.proc.stop());

    it('lets workflows run, and ends the process naming the run when one holds the thread past the limit', async () => {
      // A workflow that behaves is answered: the watch does not get in the way.
      await expect((await start(worker, false)).result()).resolves.toBe('answered');

      const stuck = await start(worker, true);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        worker.exited,
        new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running after 20 s'), 20_000))),
      ]).finally(() => clearTimeout(timer));
      expect(code).toBe(70);
      const said = worker.lines.join('\n');
      expect(said).toMatch(/has not answered for \d+ ms \(the limit is 2000 ms\)/);
      expect(said).toContain(stuck.firstExecutionRunId);
    }, 60_000);
  });

  describe('with WORKER_WORKFLOW_TIMEOUT_PER_CALL=true (the SDK guard on every call)', () => {
    let worker: SpinningWorker;
    beforeAll(async () => {
      worker = await spinningWorker({ WORKER_WORKFLOW_TIMEOUT_PER_CALL: 'true' });
    }, 90_000);
    afterAll(() => worker?.proc.stop());

    it('fails the stuck workflow task and keeps the worker serving the others', async () => {
      const stuck = await start(worker, true);
      const failure = await waitUntil(
        'the stuck workflow task to fail',
        async () => {
          const history = await client.workflow.getHandle(stuck.workflowId).fetchHistory();
          return history.events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
        },
        30_000,
      );
      expect(failure.failure?.message).toMatch(/timed out/i);
      expect(worker.proc.child.exitCode).toBeNull();
      await expect((await start(worker, false)).result()).resolves.toBe('answered');
    }, 60_000);
  });
});
