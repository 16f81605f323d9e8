import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exitOnStopSignals } from '../stack/processes';
import { benchOptions } from './measure';

const HELP = `Usage: npm run bench -- pairs [--rounds 3] [--base REV] [--env-a "K=V ..."] [--env-b "K=V ..."]
                              [--args-a "..."] [--args-b "..."] -- <load options>

Compares two sides of the load benchmark on a machine whose speed drifts by the hour (here ±15–20 %): it runs
them alternately — a, b, a, b… — so both sides see the same hours, and reports each pair's difference beside the
medians. One run of each side says little: a change worth less than a millisecond a turn needs several pairs that
agree.

  --rounds N       pairs to run (3)
  --base REV       side a is this commit, checked out in a temporary worktree that shares this checkout's
                   node_modules, .tools and built pages (removed at the end); side b is this checkout
  --env-a, --env-b settings for each side's platform, e.g. --env-b "STACK_NODE_ARGS=--max-semi-space-size=64"
  --args-a, --args-b load options for one side only (they win over the common ones), e.g. --args-b "--workers 2" (two
                   workers against one)
  after --          the load benchmark's options (npm run bench -- load --help), e.g. --visitors 300 --seconds 30

Reports, per visitor level: each side's platform CPU per turn (and by process), share of the ideal rate, first
fragment over the model (p50 / p99), the burst's first fragments and the update-to-turn-start hop, and each pair's
b − a. Results: bench/results/pairs.json.`;

/** One run's row from bench/load.ts (the fields compared). */
export interface LoadRow {
  visitors: number;
  of_ideal: string;
  platform_cpu_ms_per_turn: number;
  cpu_ms_per_turn: Record<string, number>;
  first_fragment_over_model_ms: { p50: number; p99: number };
  /** The burst of new conversations' first fragments, and the hop from the API's update to the turn's start. */
  burst_first_fragment_over_model_ms?: { p50: number; p99: number };
  update_to_turn_start_ms?: { p50: number; p99: number };
  errors: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const round = (n: number) => Math.round(n * 100) / 100;
const percent = (row: LoadRow) => Number.parseFloat(row.of_ideal);

/**
 * The comparison of pairs of runs at one visitor level: medians of each side and each pair's difference (b − a),
 * for the platform's CPU per turn, each process's, the rate and the first fragment. A pair where either run is
 * missing (a run that failed) is left out.
 */
export function comparePairs(pairs: { a?: LoadRow; b?: LoadRow }[]) {
  const whole = pairs.filter((p): p is { a: LoadRow; b: LoadRow } => !!p.a && !!p.b);
  if (!whole.length) return { pairs: 0, a: null, b: null, b_minus_a: [], cpu_verdict: 'no pair' as const };
  const side = (rows: LoadRow[]) => ({
    platform_cpu_ms_per_turn: round(median(rows.map((r) => r.platform_cpu_ms_per_turn))),
    // A process that ran in only some runs (a role seen once) counts as 0 in the others.
    cpu_ms_per_turn: Object.fromEntries(
      [...new Set(rows.flatMap((r) => Object.keys(r.cpu_ms_per_turn)))].map((k) => [
        k,
        round(median(rows.map((r) => r.cpu_ms_per_turn[k] ?? 0))),
      ]),
    ),
    of_ideal_percent: median(rows.map(percent)),
    first_fragment_p50_ms: median(rows.map((r) => r.first_fragment_over_model_ms.p50)),
    first_fragment_p99_ms: median(rows.map((r) => r.first_fragment_over_model_ms.p99)),
    burst_first_fragment_p50_ms: median(rows.map((r) => r.burst_first_fragment_over_model_ms?.p50 ?? NaN)),
    burst_first_fragment_p99_ms: median(rows.map((r) => r.burst_first_fragment_over_model_ms?.p99 ?? NaN)),
    update_to_turn_start_p50_ms: median(rows.map((r) => r.update_to_turn_start_ms?.p50 ?? NaN)),
    errors: rows.reduce((n, r) => n + r.errors, 0),
  });
  const differences = whole.map(({ a, b }) => ({
    platform_cpu_ms_per_turn: round(b.platform_cpu_ms_per_turn - a.platform_cpu_ms_per_turn),
    of_ideal_points: percent(b) - percent(a),
    first_fragment_p50_ms: round(b.first_fragment_over_model_ms.p50 - a.first_fragment_over_model_ms.p50),
    ...(a.burst_first_fragment_over_model_ms && b.burst_first_fragment_over_model_ms
      ? {
          burst_first_fragment_p50_ms: round(
            b.burst_first_fragment_over_model_ms.p50 - a.burst_first_fragment_over_model_ms.p50,
          ),
        }
      : {}),
  }));
  const cpu = differences.map((d) => d.platform_cpu_ms_per_turn);
  return {
    pairs: whole.length,
    a: side(whole.map((p) => p.a)),
    b: side(whole.map((p) => p.b)),
    b_minus_a: differences,
    // Every pair on the same side of zero is what a real difference looks like here; mixed signs are the hour's noise.
    cpu_verdict: cpu.every((d) => d < 0)
      ? 'b cheaper in every pair'
      : cpu.every((d) => d > 0)
        ? 'b dearer in every pair'
        : 'mixed: within the noise',
  };
}

/** `K=V K2=V2` into an environment. */
function parseEnv(spec: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const part of spec.split(' ').filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`Not a setting: "${part}" (expected NAME=value)`);
    env[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return env;
}

const ROOT = path.join(__dirname, '..');

/** A worktree of `rev` that uses this checkout's installed packages, tools and built pages. */
function worktreeOf(rev: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-pairs-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, rev], { cwd: ROOT, stdio: 'ignore' });
  for (const shared of ['node_modules', '.tools', 'web/dashboard/dist', 'web/widget/dist']) {
    const from = path.join(ROOT, shared);
    if (!existsSync(from) || existsSync(path.join(dir, shared))) continue;
    mkdirSync(path.dirname(path.join(dir, shared)), { recursive: true });
    symlinkSync(from, path.join(dir, shared));
  }
  // The checkout's files are newer than the shared packages and pages, which would make `npm start`'s setup (with
  // --user-path) install packages and build the pages again in the worktree: dated back, they are not.
  const longAgo = new Date(0);
  const dateBack = (p: string) => {
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) return;
    if (stat.isDirectory()) for (const entry of readdirSync(p)) dateBack(path.join(p, entry));
    utimesSync(p, longAgo, longAgo);
  };
  for (const source of ['package-lock.json', 'web'])
    if (existsSync(path.join(dir, source))) dateBack(path.join(dir, source));
  return dir;
}

function removeWorktree(dir: string): void {
  try {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

let running: ChildProcess | undefined;

/** Runs the load benchmark in `cwd` and returns its rows (one per visitor level); none if it failed. */
function runLoad(cwd: string, env: Record<string, string>, args: string[]): Promise<LoadRow[]> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(cwd, 'bench', 'load.ts'), ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running = child;
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', () => {
      running = undefined;
      resolve(
        out
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as LoadRow),
      );
    });
  });
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const dash = process.argv.indexOf('--');
  const loadArgs = dash >= 0 ? process.argv.slice(dash + 1) : [];
  const rounds = Number(arg('--rounds', '3'));
  const base = arg('--base', '');
  const sideArgs = (name: string) => arg(name, '').split(' ').filter(Boolean);
  const sides = {
    a: {
      env: parseEnv(arg('--env-a', '')),
      args: sideArgs('--args-a'),
      cwd: ROOT,
      label: base ? `commit ${base}` : 'a',
    },
    b: { env: parseEnv(arg('--env-b', '')), args: sideArgs('--args-b'), cwd: ROOT, label: 'this checkout' },
  };
  if (base) {
    sides.a.cwd = worktreeOf(base);
    process.once('exit', () => removeWorktree(sides.a.cwd));
  }
  // A stopped comparison stops its benchmark, which stops the platform it started, and removes its worktree.
  process.once('exit', () => running?.kill('SIGTERM'));
  exitOnStopSignals();

  const byLevel = new Map<number, { a?: LoadRow; b?: LoadRow }[]>();
  for (let round = 0; round < rounds; round++) {
    for (const key of ['a', 'b'] as const) {
      const rows = await runLoad(sides[key].cwd, sides[key].env, [...sides[key].args, ...loadArgs]);
      if (!rows.length) console.error(`pairs: round ${round + 1}, side ${key} (${sides[key].label}) gave no result`);
      for (const row of rows) {
        const pairs = byLevel.get(row.visitors) ?? [];
        (pairs[round] ??= {})[key] = row;
        byLevel.set(row.visitors, pairs);
        console.error(
          `round ${round + 1} ${key}: ${row.visitors} visitors, ${row.platform_cpu_ms_per_turn} ms a turn, ${row.of_ideal}, ` +
            `first fragment p50 ${row.first_fragment_over_model_ms.p50} ms, burst p50 ${row.burst_first_fragment_over_model_ms?.p50} ms`,
        );
      }
    }
  }
  const results = [...byLevel].map(([visitors, pairs]) => ({
    visitors,
    a_side: sides.a.label,
    a_env: sides.a.env,
    b_env: sides.b.env,
    a_args: sides.a.args,
    b_args: sides.b.args,
    ...comparePairs(pairs),
  }));
  for (const r of results) console.log(JSON.stringify(r));
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  // Each run's whole row too (its first error, its hops), for a pair that looks odd.
  const runs = [...byLevel].map(([visitors, pairs]) => ({ visitors, pairs }));
  writeFileSync(path.join(__dirname, 'results', 'pairs.json'), JSON.stringify({ results, runs }, null, 2));
}

if (require.main === module || process.argv[1] === path.resolve(__filename)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
