import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const clones: string[] = [];
afterAll(() => clones.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * `npm start -- --help` and `npm run cluster -- --help` answer at once: setup (npm install, go install of Temporal —
 * minutes on a fresh clone) does not run first. Run in a copy of the project's scripts with no node_modules or .tools,
 * whose setup.sh fails loudly if anything calls it.
 */
function freshClone(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'launch-help-'));
  clones.push(dir);
  copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(path.join(ROOT, 'scripts', 'launch.sh'), path.join(dir, 'scripts', 'launch.sh'));
  cpSync(path.join(ROOT, 'scripts', 'help'), path.join(dir, 'scripts', 'help'), { recursive: true });
  writeFileSync(path.join(dir, 'scripts', 'setup.sh'), 'echo "setup ran" >&2\nexit 97\n');
  return dir;
}

function npm(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', ...args], { cwd, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({
        code: err ? Number((err as { code?: number }).code ?? 1) : 0,
        stdout,
        stderr,
        ms: Date.now() - started,
      }),
    );
  });
}

describe('--help before setup', () => {
  it.each([
    ['cluster', ['cluster', '--', '--help'], 'Usage: npm run cluster'],
    ['cluster', ['cluster', '--', '--apis', '3', '-h'], 'Usage: npm run cluster'],
    ['start', ['start', '--', '--help'], 'Usage: npm start'],
  ])('npm run %s with %j prints the help at once and sets nothing up', async (name, args, usage) => {
    const result = await npm(freshClone(), args);
    expect(result.stderr).not.toContain('setup ran');
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith(usage)).toBe(true);
    expect(result.stdout).toBe(readFileSync(path.join(ROOT, 'scripts', 'help', `${name}.txt`), 'utf8'));
    expect(result.ms).toBeLessThan(10_000);
  });

  it('without --help the setup runs first, then the script', async () => {
    const result = await npm(freshClone(), ['cluster', '--', '--apis', '3']);
    expect(result.stderr).toContain('setup ran');
    expect(result.code).not.toBe(0);
  });

  it('the cluster help names the Temporal UI it runs, its port option, and TEMPORAL_UI_URL for a Temporal of yours', () => {
    const help = readFileSync(path.join(ROOT, 'scripts', 'help', 'cluster.txt'), 'utf8');
    expect(help).toMatch(/the Temporal Web UI/);
    expect(help).toMatch(/--ui-port U/);
    expect(help).toMatch(/TEMPORAL_ADDRESS.*\n.*TEMPORAL_UI_URL/);
  });
});
