import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createDb } from '../lib/db';
import { startBaseline } from './baseline';
import { cpuByRole, cpuPerOperation } from './cpu';
import { benchOptions, runConcurrent, summarize } from './measure';
import { benchBot } from './stack';
import { startMeasuredPlatform } from './user-path';

const HELP = `Usage: npm run bench -- polling [--requests N] [--concurrency 1,16,64] [--user-path]

Requests per second and latency of GET /v1/api/messages (the hottest path: auth, rate limit, one indexed query)
on conversations with a few dozen messages, beside a bare Koa route doing one Postgres query (the baseline), in the
same run, and beside a bare node:http server doing the same query. Target: polling at least half the baseline's
throughput. --user-path measures npm start as shipped instead (bench load --help), with RATE_LIMIT_READS raised for
the one client unless the shell sets it. Results: bench/results/polling.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const total = Number(arg('--requests', '3000'));
  const levels = arg('--concurrency', '1,16,64').split(',').map(Number);

  const stack = await startMeasuredPlatform(process.argv.includes('--user-path'), { RATE_LIMIT_READS: '1000000' });
  const db = createDb(stack.env.DATABASE_URL, { max: 4 });
  const baseline = await startBaseline(stack.env.DATABASE_URL);
  const bare = await startBaseline(stack.env.DATABASE_URL, 'node:http');
  try {
    const bot = await benchBot(db, stack.env.SECRET_ENCRYPTION_KEY);
    await stack.ready(db);
    // 50 conversations of 40 messages each, written directly: the benchmark is about reading them.
    const sessions = Array.from({ length: 50 }, () => randomUUID());
    for (const sid of sessions) {
      await db.query(`INSERT INTO conversations (session_id, bot_id, workspace_id) VALUES ($1, $2, $3)`, [
        sid,
        bot.bot_id,
        bot.workspace_id,
      ]);
      for (let i = 0; i < 40; i++) {
        await db.query(
          `INSERT INTO messages (id, session_id, bot_id, author, text, at) VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            `msg_${randomUUID()}`,
            sid,
            bot.bot_id,
            i % 2 ? 'bot' : 'visitor',
            `message ${i} of a realistic length, a sentence or two that a visitor or the bot might write`,
            Date.now(),
          ],
        );
      }
    }
    const api = stack.url;
    const headers = { 'X-Bot-Key': bot.keys.secret_key };
    // Half the polls start from the beginning, half from a cursor at the end (the steady state: nothing new).
    const first = (await (await fetch(`${api}/v1/api/messages?session_id=${sessions[0]}`, { headers })).json()) as {
      next_cursor: string;
    };
    const poll = async (i: number) => {
      const sid = sessions[i % sessions.length];
      const url =
        i % 2
          ? `${api}/v1/api/messages?session_id=${sid}`
          : `${api}/v1/api/messages?session_id=${sessions[0]}&cursor=${first.next_cursor}`;
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`poll ${res.status}`);
      await res.arrayBuffer();
    };
    const baselineOf = (server: { url: string }) => async (i: number) => {
      const res = await fetch(`${server.url}/?session_id=${sessions[i % sessions.length]}`);
      await res.arrayBuffer();
    };
    const sides = { polling: poll, baseline: baselineOf(baseline), bare: baselineOf(bare) };
    for (const run of Object.values(sides)) await runConcurrent(300, 8, run);

    const results = [];
    for (const c of levels) {
      // The sides take turns in rounds (in a rotating order), so a slow moment of the machine falls on each rather
      // than on whichever happened to run then.
      const rounds = 6;
      const perRound = Math.ceil(total / rounds);
      const names = Object.keys(sides) as (keyof typeof sides)[];
      const side = Object.fromEntries(
        names.map((n) => [n, { ms: 0, lat: [] as number[], cpu: {} as Record<string, number> }]),
      ) as Record<keyof typeof sides, { ms: number; lat: number[]; cpu: Record<string, number> }>;
      for (let r = 0; r < rounds; r++) {
        const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)];
        for (const name of order) {
          const t = performance.now();
          const cpuBefore = cpuByRole();
          side[name].lat.push(...(await runConcurrent(perRound, c, sides[name])));
          side[name].ms += performance.now() - t;
          for (const [role, ms] of Object.entries(cpuPerOperation(cpuBefore, cpuByRole(), 1)))
            side[name].cpu[role] = (side[name].cpu[role] ?? 0) + ms;
        }
      }
      const rps = (name: keyof typeof sides) => side[name].lat.length / (side[name].ms / 1000);
      const figures = (name: keyof typeof sides) => ({
        rps: Math.round(rps(name)),
        latency_ms: summarize(side[name].lat),
        cpu_ms_per_request: cpuPerOperation({}, side[name].cpu, side[name].lat.length),
      });
      const row = {
        concurrency: c,
        polling: figures('polling'),
        baseline: figures('baseline'),
        bare_node_http: figures('bare'),
        throughput_vs_baseline: Math.round((rps('polling') / rps('baseline')) * 100) / 100,
        throughput_vs_bare_node_http: Math.round((rps('polling') / rps('bare')) * 100) / 100,
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
    writeFileSync(
      path.join(__dirname, 'results', 'polling.json'),
      JSON.stringify(
        {
          benchmark: 'polling',
          at: new Date().toISOString(),
          requests: total,
          target: 'polling throughput >= 0.5 x baseline (Koa), >= 0.3 x bare node:http',
          shape: process.argv.includes('--user-path') ? 'npm start as shipped' : 'bench stack',
          results,
        },
        null,
        2,
      ),
    );
  } finally {
    await baseline.close();
    await bare.close();
    await db.end();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
