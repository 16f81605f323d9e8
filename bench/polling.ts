import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createDb } from '../lib/db';
import { startBaseline } from './baseline';
import {
  benchOptions,
  benchBot,
  cpuByRole,
  cpuPerOperation,
  liftRateLimits,
  runConcurrent,
  startBenchStack,
  summarize,
} from './stack';

const HELP = `Usage: npm run bench -- polling [--requests N] [--concurrency 1,16,64]

Requests per second and latency of GET /v1/api/messages (the hottest path: auth, rate limit, one indexed query)
on conversations with a few dozen messages, beside a bare Koa route doing one Postgres query (the baseline), in the
same run. Target: polling at least half the baseline's throughput. Results: bench/results/polling.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const total = Number(arg('--requests', '3000'));
  const levels = arg('--concurrency', '1,16,64').split(',').map(Number);

  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 4 });
  const baseline = await startBaseline(stack.platform.env.DATABASE_URL);
  try {
    const bot = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
    await liftRateLimits(db);
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
    const api = stack.platform.apiUrl;
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
    const base = async (i: number) => {
      const res = await fetch(`${baseline.url}/?session_id=${sessions[i % sessions.length]}`);
      await res.arrayBuffer();
    };
    await runConcurrent(300, 8, poll);
    await runConcurrent(300, 8, base);

    const results = [];
    for (const c of levels) {
      // Polling and baseline take turns in rounds (in alternating order), so a slow moment of the machine falls on
      // both rather than on whichever happened to run then.
      const rounds = 6;
      const perRound = Math.ceil(total / rounds);
      const side = {
        polling: { ms: 0, lat: [] as number[], cpu: {} as Record<string, number> },
        baseline: { ms: 0, lat: [] as number[], cpu: {} as Record<string, number> },
      };
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? (['baseline', 'polling'] as const) : (['polling', 'baseline'] as const);
        for (const name of order) {
          const t = performance.now();
          const cpuBefore = cpuByRole();
          side[name].lat.push(...(await runConcurrent(perRound, c, name === 'polling' ? poll : base)));
          side[name].ms += performance.now() - t;
          for (const [role, ms] of Object.entries(cpuPerOperation(cpuBefore, cpuByRole(), 1)))
            side[name].cpu[role] = (side[name].cpu[role] ?? 0) + ms;
        }
      }
      const pollRps = side.polling.lat.length / (side.polling.ms / 1000);
      const baseRps = side.baseline.lat.length / (side.baseline.ms / 1000);
      const row = {
        concurrency: c,
        polling: {
          rps: Math.round(pollRps),
          latency_ms: summarize(side.polling.lat),
          cpu_ms_per_request: cpuPerOperation({}, side.polling.cpu, side.polling.lat.length),
        },
        baseline: {
          rps: Math.round(baseRps),
          latency_ms: summarize(side.baseline.lat),
          cpu_ms_per_request: cpuPerOperation({}, side.baseline.cpu, side.baseline.lat.length),
        },
        throughput_vs_baseline: Math.round((pollRps / baseRps) * 100) / 100,
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
          target: 'polling throughput >= 0.5 x baseline',
          results,
        },
        null,
        2,
      ),
    );
  } finally {
    await baseline.close();
    await db.end();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
