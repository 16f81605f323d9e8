import { describe, expect, it } from '@jest/globals';
import { type StartedWorker, WorkerSupervisor } from '../../worker/supervisor';

/**
 * The supervisor's own bookkeeping, with stand-in workers: which worker runs, which is told to stop, and when the
 * process may end. A real worker replaced after a real Temporal outage is in test/http/temporal-outage.test.ts.
 */
class StandIn {
  state: 'INITIALIZED' | 'RUNNING' | 'DRAINING' | 'STOPPED' = 'INITIALIZED';
  closed = false;
  private end!: (err?: Error) => void;
  readonly connection = { close: async () => void (this.closed = true) };
  readonly worker = {
    run: () => {
      this.state = 'RUNNING';
      return new Promise<void>((resolve, reject) => {
        this.end = (err) => {
          this.state = 'STOPPED';
          if (err) reject(err);
          else resolve();
        };
      });
    },
    shutdown: () => {
      this.state = 'DRAINING';
    },
    getState: () => this.state,
  };
  /** What the SDK does when a draining worker has finished what it held, or when a worker fails. */
  finish(err?: Error) {
    this.end(err);
  }
  get started(): StartedWorker {
    return this as unknown as StartedWorker;
  }
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const tick = () => new Promise((r) => setTimeout(r, 10));

function supervisorOf(workers: StandIn[], opts: { failures?: number } = {}) {
  let created = 0;
  let failures = opts.failures ?? 0;
  return new WorkerSupervisor({
    logger: quiet,
    startRetryMs: 1,
    startAttempts: 3,
    createWorker: async () => {
      if (created > 0 && failures-- > 0) throw new Error('namespace not ready');
      return workers[created++]!.started;
    },
  });
}

/** A supervisor whose first worker runs and has been replaced by a second. */
async function replacedOnce() {
  const [first, second] = [new StandIn(), new StandIn()];
  const supervisor = supervisorOf([first, second]);
  await supervisor.start();
  const finished = supervisor.finished();
  let ended = false;
  void finished.then(
    () => (ended = true),
    () => undefined, // a test that expects a failure awaits `finished` itself
  );
  await supervisor.replace('Temporal is back');
  return { first, second, supervisor, finished, ended: () => ended };
}

describe('WorkerSupervisor', () => {
  it('starts the fresh worker before telling the current one to stop; ends when both have finished', async () => {
    const { first, second, supervisor, finished, ended } = await replacedOnce();
    expect(second.state).toBe('RUNNING');
    expect(first.state).toBe('DRAINING'); // it finishes what it holds

    first.finish();
    await tick();
    expect(first.closed).toBe(true);
    expect(ended()).toBe(false); // the fresh one still works

    supervisor.shutdown();
    expect(second.state).toBe('DRAINING');
    second.finish();
    await finished;
    expect(second.closed).toBe(true);
  });

  it('on shutdown, waits for a replaced worker that is still finishing', async () => {
    const { first, second, supervisor, finished, ended } = await replacedOnce();
    supervisor.shutdown();
    second.finish();
    await tick();
    expect(ended()).toBe(false);
    first.finish();
    await finished;
  });

  it('tries a fresh worker again when it cannot start yet; after its attempts, the current worker goes on', async () => {
    const workers = [new StandIn(), new StandIn()];
    const retried = supervisorOf(workers, { failures: 2 });
    await retried.start();
    await retried.replace('Temporal is back');
    expect(workers.map((w) => w.state)).toEqual(['DRAINING', 'RUNNING']);

    const kept = [new StandIn(), new StandIn()];
    const givenUp = supervisorOf(kept, { failures: 3 });
    await givenUp.start();
    await givenUp.replace('Temporal is back');
    expect(kept.map((w) => w.state)).toEqual(['RUNNING', 'INITIALIZED']);
  });

  it("fails with the current worker's failure, not with a replaced worker's", async () => {
    const { first, second, finished } = await replacedOnce();
    first.finish(new Error('lost while draining'));
    await tick();
    second.finish(new Error('fatal'));
    await expect(finished).rejects.toThrow('fatal');
  });

  it('does not replace a worker once stopping', async () => {
    const [first, second] = [new StandIn(), new StandIn()];
    const supervisor = supervisorOf([first, second]);
    await supervisor.start();
    supervisor.shutdown();
    await supervisor.replace('Temporal is back');
    expect(second.state).toBe('INITIALIZED');
    first.finish();
    await supervisor.finished();
  });
});
