import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `npm run bench -- <name> [options]`: runs bench/<name>.ts; `--help` lists them. A benchmark is a file of bench/ that
 * no other file of it imports: the rest (stack.ts, measure.ts, cpu.ts…) are the benchmarks' parts.
 */
const files = readdirSync(__dirname).filter((f) => f.endsWith('.ts') && f !== 'run.ts');
const imported = new Set(
  files.flatMap((f) =>
    [...readFileSync(path.join(__dirname, f), 'utf8').matchAll(/from '\.\/([\w-]+)'/g)].map((m) => `${m[1]}.ts`),
  ),
);
const benches = files.filter((f) => !imported.has(f)).map((f) => f.replace(/\.ts$/, ''));

const [name, ...args] = process.argv.slice(2);
if (!name || name === '--help' || name === '-h') {
  console.log(
    `Usage: npm run bench -- <name> [options]   (each takes --help)\n\nBenchmarks: ${benches.join(', ')}\nResults go to bench/results/<name>.json.`,
  );
  process.exit(name ? 0 : 2);
}
const file = path.join(__dirname, `${name}.ts`);
if (!benches.includes(name) || !existsSync(file)) {
  console.error(`No benchmark "${name}". Benchmarks: ${benches.join(', ')}`);
  process.exit(2);
}
// The benchmark hears this process's signals (a `timeout`, a supervisor): it stops the platform it started.
const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0)));
