import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from '../lib/logger';

/** A worker and the connection it alone uses (closed when the worker has finished). */
export interface StartedWorker {
  worker: Pick<Worker, 'run' | 'shutdown' | 'getState'>;
  connection: Pick<NativeConnection, 'close'>;
}

interface Running extends StartedWorker {
  done: Promise<void>;
}

/**
 * Runs the platform's worker, and replaces it with a fresh one on request: after Temporal comes back from an outage
 * (worker/main.ts). Why: the SDK's pollers wait up to 10 s (±20 %) between failed polls, a schedule built into
 * sdk-core that no option changes, so after an outage of more than a few seconds a worker would ask for work up to
 * 12 s after the API already sends turns again. A new worker polls at once; the one it replaces stops polling and
 * finishes what it holds, as at any graceful shutdown (its shutdownGraceTime).
 */
export class WorkerSupervisor {
  private current?: Running;
  private readonly retired = new Set<Promise<void>>();
  private stopping = false;
  private replacing = false;

  constructor(
    private readonly deps: {
      createWorker: () => Promise<StartedWorker>;
      /** How often `replace` tries to start the new worker (5), and how long it waits between tries (1 s). */
      startAttempts?: number;
      startRetryMs?: number;
      logger: Pick<Logger, 'info' | 'warn' | 'error'>;
    },
  ) {}

  /** Starts the first worker. */
  async start(): Promise<void> {
    this.current = this.launch(await this.deps.createWorker());
    if (this.stopping) stop(this.current);
  }

  /**
   * Resolves once `shutdown()` was called and every worker has finished. The current worker's failure is the
   * supervisor's (a process that cannot work should end); a replaced worker's is only logged.
   */
  async finished(): Promise<void> {
    for (;;) {
      const watched = this.current;
      if (!watched) throw new Error('finished() before start()');
      try {
        await watched.done;
      } catch (err) {
        if (watched === this.current) throw err;
        // Its replacement is running: this one's end matters to nobody but the log.
        this.deps.logger.warn({ err: String(err) }, 'replaced worker ended with an error');
      }
      if (watched === this.current) break;
    }
    await Promise.allSettled([...this.retired]);
  }

  /**
   * Starts a new worker, then retires the current one. A start that fails (Temporal answers but is not yet ready
   * for workers) is tried again, a few times; if none succeeds the current worker goes on, and its own pollers
   * reach Temporal again, only later. Does nothing while stopping or already replacing.
   */
  async replace(reason: string): Promise<void> {
    if (this.stopping || this.replacing || !this.current) return;
    this.replacing = true;
    try {
      let started: StartedWorker | undefined;
      for (let attempt = 1; !started; attempt++) {
        try {
          started = await this.deps.createWorker();
        } catch (err) {
          const last = attempt >= (this.deps.startAttempts ?? 5);
          this.deps.logger.warn(
            { err: String(err), reason, attempt },
            last ? 'could not start a fresh worker; the current one goes on' : 'could not start a fresh worker yet',
          );
          if (last || this.stopping) return;
          await new Promise((r) => setTimeout(r, this.deps.startRetryMs ?? 1_000));
        }
      }
      const next = this.launch(started);
      const previous = this.current;
      this.current = next;
      this.retire(previous);
      // A stop that came while the new worker was starting applies to it as well.
      if (this.stopping) stop(next);
      this.deps.logger.info({ reason }, 'fresh worker polling; the previous one finishes what it holds');
    } finally {
      this.replacing = false;
    }
  }

  /** Graceful shutdown of every worker (running activities get their grace time). */
  shutdown(): void {
    this.stopping = true;
    if (this.current) stop(this.current);
  }

  private launch(started: StartedWorker): Running {
    const done = started.worker.run().finally(() => started.connection.close().catch(() => undefined));
    return { ...started, done };
  }

  private retire(running: Running): void {
    stop(running);
    const settled = running.done.catch(() => undefined);
    this.retired.add(settled);
    void settled.then(() => this.retired.delete(settled));
  }
}

/** Begins a worker's graceful shutdown, unless the SDK's own signal handling already has. */
function stop(running: StartedWorker): void {
  if (running.worker.getState() === 'RUNNING') running.worker.shutdown();
}
