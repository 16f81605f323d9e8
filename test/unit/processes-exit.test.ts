import { describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, waitFor } from '../../stack/processes';

const run = promisify(execFile);
/** Running (a killed child whose new parent has not reaped it yet is a zombie: not running). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
};

describe('children of stack (stack/processes.ts)', () => {
  it('do not outlive a parent that exits without stopping them', async () => {
    // A parent that starts a long-running child and exits at once, as jest does when another project's setup fails.
    const script = `
      const { startProcess } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'stack', 'processes'))});
      const p = startProcess('sleeper', 'sleep', ['60'], { quiet: true });
      p.child.once('spawn', () => { process.stdout.write(String(p.child.pid)); process.exit(3); });
    `;
    const child = await run(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: path.join(__dirname, '..', '..'),
    }).catch((err: { stdout: string; code: number }) => err);
    expect((child as { code?: number }).code).toBe(3);
    const pid = Number((child as { stdout: string }).stdout);
    expect(pid).toBeGreaterThan(0);
    // Killed on the way out (SIGKILL is delivered at once; give the kernel a moment to reap it).
    for (let i = 0; i < 20 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  });

  /** A parent that starts a sleeping child, prints its pid and waits; `own` is its own handler for SIGTERM, if any. */
  function parentWithChild(own = '') {
    const script = `
      const { startProcess } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'stack', 'processes'))});
      ${own}
      const p = startProcess('sleeper', 'sleep', ['60'], { quiet: true });
      p.child.once('spawn', () => process.stdout.write(String(p.child.pid) + '\\n'));
      setInterval(() => undefined, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: path.join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const childPid = new Promise<number>((resolve) =>
      parent.stdout.on('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      parent.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { parent, childPid, exited };
  }
  const gone = async (pid: number) => {
    for (let i = 0; i < 40 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    return !alive(pid);
  };

  it('do not outlive a parent stopped by a signal it does not handle (a benchmark under `timeout`)', async () => {
    const { parent, childPid, exited } = parentWithChild();
    const pid = await childPid;
    expect(alive(pid)).toBe(true);
    parent.kill('SIGTERM');
    // An exit with SIGTERM's conventional code, on the way out of which the child is killed.
    expect(await exited).toEqual({ code: 143, signal: null });
    expect(await gone(pid)).toBe(true);
  });

  it("leave a signal to a parent that handles it itself (npm start's graceful stop)", async () => {
    const own = `process.on('SIGTERM', () => { process.stdout.write('own\\n'); setTimeout(() => process.exit(7), 200); });`;
    const { parent, childPid, exited } = parentWithChild(own);
    const pid = await childPid;
    parent.kill('SIGTERM');
    expect(await exited).toEqual({ code: 7, signal: null });
    expect(await gone(pid)).toBe(true);
  });

  it('that die while starting are reported with their last lines of output, quiet or not', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const script = `console.log(${JSON.stringify(lines.slice(0, 10).join('\n'))}); console.error(${JSON.stringify(lines.slice(10).join('\n'))}); process.exit(2);`;
    const dying = startProcess('dying', process.execPath, ['-e', script], { quiet: true });
    const error = await waitFor('dying', async () => false, 10_000, dying.child).catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^dying exited with code 2 while starting; its last output:\n/);
    // The last 15 lines, in order (stdout's and stderr's as they came: here all of one, then all of the other).
    expect(message.split('\n').slice(1)).toEqual(lines.slice(5));
  });
});
