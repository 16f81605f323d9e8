import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface StopOptions {
  /** Copy the processes' logs here before the data folder goes (a run whose turns failed: what they said). */
  keepLogsIn?: string;
}

export function keepLogs(dataDir: string, opts: StopOptions = {}): void {
  const logs = path.join(dataDir, 'logs');
  if (!opts.keepLogsIn || !existsSync(logs)) return;
  rmSync(opts.keepLogsIn, { recursive: true, force: true });
  cpSync(logs, opts.keepLogsIn, { recursive: true });
}

/**
 * A benchmark's data folder (Postgres, Temporal, logs), removed when its platform stops — or when the benchmark exits
 * without stopping it (interrupted: stack/processes.ts turns a signal into an exit and kills the children).
 */
const dataDirs = new Set<string>();
let removedOnExit = false;
export function benchDataDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o755);
  dataDirs.add(dir);
  if (!removedOnExit) {
    removedOnExit = true;
    // Best effort: on the way out the services may still be writing to it (another exit handler kills them).
    process.once('exit', () => {
      for (const d of dataDirs) {
        try {
          rmSync(d, { recursive: true, force: true, maxRetries: 2 });
        } catch {
          // left for the system's cleanup of temporary files
        }
      }
    });
  }
  return dir;
}
export function removeBenchDataDir(dir: string): void {
  dataDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}
