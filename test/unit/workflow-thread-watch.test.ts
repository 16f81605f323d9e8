/**
 * The watch on the worker's workflow thread (patches/@temporalio+worker+1.24.0.patch, WorkerThreadClient.watchLiveness;
 * docs/decisions/125-workflow-thread-deadlock-guard.md), driven with a stand-in for the thread: it ends the process
 * when the thread answers nothing past the limit while a request waits, and it does not when the answer came but waits,
 * unread, behind a block of the worker's own main thread.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';
import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';

/** What the patch adds to the SDK's class (its type declarations are the SDK's). */
interface Watched {
  send(input: unknown): Promise<unknown>;
  watchLiveness(timeoutMs: number): void;
}

/** A stand-in for the workflow thread: it records requests; the test answers them. */
class FakeThread extends EventEmitter {
  requests: { requestId: bigint }[] = [];
  postMessage(request: { requestId: bigint }) {
    this.requests.push(request);
  }
  answer(requestId: bigint) {
    this.emit('message', {
      requestId,
      result: { type: 'ok', output: { type: 'activation-completion', completion: {} } },
    });
  }
  exit() {
    this.emit('exit', 1);
  }
}

const LIMIT_MS = 200;
const busyFor = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // the worker's main thread, blocked
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the watch on the worker's workflow thread", () => {
  let thread: FakeThread;
  let client: Watched;
  let errors: string[];
  let exit: jest.SpiedFunction<typeof process.exit>;

  beforeEach(() => {
    thread = new FakeThread();
    errors = [];
    const logger = {
      error: (message: string) => errors.push(message),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      trace: () => undefined,
      log: () => undefined,
    };
    client = new WorkerThreadClient(thread as never, logger as never) as unknown as Watched;
    exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  });
  afterEach(() => {
    thread.exit(); // stops the watch
    exit.mockRestore();
  });

  it('ends the process, naming the run, when the thread answers nothing past the limit', async () => {
    client.watchLiveness(LIMIT_MS);
    void client.send({ type: 'activate-workflow', runId: 'run-stuck', activation: {} }).catch(() => undefined);
    await sleep(LIMIT_MS * 3);
    expect(exit).toHaveBeenCalledWith(70);
    expect(errors.join('\n')).toMatch(/has not answered for \d+ ms \(the limit is 200 ms\).*run-stuck/);
  });

  it('leaves a thread that answers alone, however long the work goes on', async () => {
    client.watchLiveness(LIMIT_MS);
    for (let i = 0; i < 12; i++) {
      void client.send({ type: 'activate-workflow', runId: `run-${i}`, activation: {} });
      await sleep(LIMIT_MS / 4);
      thread.answer(thread.requests[i].requestId);
    }
    expect(exit).not.toHaveBeenCalled();
  });

  it('does not mistake answers left unread behind a block of the main thread for a stuck thread', async () => {
    client.watchLiveness(LIMIT_MS);
    const sent = client.send({ type: 'activate-workflow', runId: 'run-answered', activation: {} });
    // The answer comes over a message port, as the thread's do: it is read in the event loop's poll phase. The main
    // thread is blocked past the limit in a setImmediate callback (an activity's synchronous work), so the watch's
    // timer, due meanwhile, runs before the answer is read.
    const { port1, port2 } = new MessageChannel();
    port1.on('message', () => thread.answer(thread.requests[0].requestId));
    setImmediate(() => {
      port2.postMessage('answered');
      busyFor(LIMIT_MS * 4);
    });
    await sent;
    await sleep(LIMIT_MS);
    port1.close();
    expect(exit).not.toHaveBeenCalled();
  });
});
