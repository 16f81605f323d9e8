import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createDb } from '../lib/db';
import { startBaseline } from './baseline';
import { cpuByRole, cpuPerOperation } from './cpu';
import { benchOptions, runConcurrent, summarize } from './measure';
import { benchBot } from './stack';
import { startMeasuredPlatform } from './user-path';

const HELP = `Usage: npm run bench -- chat [--turns N] [--concurrency 1,4,16] [--live-turns N] [--cache-turns N] [--user-path]

Platform overhead per chat turn over a zero-latency fake LLM, for POST /v1/api/chat (JSON) and the first fragment
of POST /v1/api/chat/stream. Starts its own platform (as the tests do). Two kinds of load:

  closed loop   at each --concurrency, that many sessions each send their next message the moment the answer
                arrives: latency at saturation, throughput (turns/s) and CPU per turn of each process;
  live          16 sessions open at once, each visitor reading the answer and typing for a second before the
                next message (--live-turns each): the load 16 concurrent conversations put on the platform.

  answer cache  a first question answered by a model taking 100 ms, beside the same question answered from the
                bot's answer cache (--cache-turns of each, alternating).

Beside them, the same load on a bare Koa route doing one Postgres query (the baseline), in the same run.
--user-path measures npm start as shipped instead, the model in a process of its own (bench load --help), with
RATE_LIMIT_DIALOGUE and RATE_LIMIT_READS raised for the one client unless the shell sets them.
Target: chat overhead p50 under 30 ms at 16 concurrent sessions (the live load). Results: bench/results/chat.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const turns = Number(arg('--turns', '200'));
  const levels = arg('--concurrency', '1,4,16').split(',').map(Number);
  const liveTurns = Number(arg('--live-turns', '15'));
  const cacheTurns = Number(arg('--cache-turns', '40'));

  const stack = await startMeasuredPlatform(process.argv.includes('--user-path'), {
    RATE_LIMIT_DIALOGUE: '1000000',
    RATE_LIMIT_READS: '1000000',
  });
  const db = createDb(stack.env.DATABASE_URL, { max: 4 });
  const baseline = await startBaseline(stack.env.DATABASE_URL);
  try {
    const bot = await benchBot(db, stack.env.SECRET_ENCRYPTION_KEY);
    const api = stack.url;
    const headers = { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json' };
    await stack.ready(db);

    // Every question is new, so the answer cache never answers for the model in the overhead figures.
    let asked = 0;
    const chatOnce = async (session: string, message = `hello ${++asked}`) => {
      const res = await fetch(`${api}/v1/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ session_id: session, message }),
      });
      if (res.status !== 200) throw new Error(`chat ${res.status}: ${await res.text()}`);
      await res.json();
    };
    const streamFirstFragment = async (session: string): Promise<number> => {
      const started = performance.now();
      const res = await fetch(`${api}/v1/api/chat/stream`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ session_id: session, message: `hello ${++asked}` }),
      });
      const reader = res.body!.getReader();
      let first = NaN;
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += Buffer.from(value).toString();
        if (Number.isNaN(first) && buf.includes('"delta"')) first = performance.now() - started;
      }
      return first;
    };
    const llmOnce = async () => {
      const res = await fetch(`${stack.modelUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: 'Bearer x', 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'hello' }] }),
      });
      await res.json();
    };

    const baselineOnce = async (session: string) => {
      const res = await fetch(`${baseline.url}/?session_id=${session}`);
      await res.json();
    };

    // Warm up: workflow caches, connection pools, JIT.
    await runConcurrent(40, 4, () => chatOnce(randomUUID()));

    const results: Record<string, unknown>[] = [];
    for (const c of levels) {
      const sessions = Array.from({ length: c }, () => randomUUID());
      const llm = summarize(await runConcurrent(turns, c, () => llmOnce()));
      const cpuBefore = cpuByRole();
      const started = performance.now();
      const chat = summarize(await runConcurrent(turns, c, (i) => chatOnce(sessions[i % c])));
      const turnsPerSecond = Math.round((turns / ((performance.now() - started) / 1000)) * 10) / 10;
      const cpu = cpuPerOperation(cpuBefore, cpuByRole(), turns);
      const firsts: number[] = [];
      await runConcurrent(Math.min(turns, 100), c, async (i) => {
        firsts.push(await streamFirstFragment(sessions[i % c]));
      });
      const stream = summarize(firsts);
      const base = summarize(await runConcurrent(turns, c, (i) => baselineOnce(sessions[i % c])));
      const row = {
        load: 'closed loop',
        concurrency: c,
        chat_ms: chat,
        stream_first_fragment_ms: stream,
        fake_llm_ms: llm,
        baseline_ms: base,
        chat_overhead_p50_ms: Math.round((chat.p50 - llm.p50) * 10) / 10,
        turns_per_s: turnsPerSecond,
        cpu_ms_per_turn: cpu,
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
    // Live: 16 sessions that each wait a visitor's second between turns (answer read, next message typed), rather
    // than firing the next turn at once: the load a site with 16 conversations going on at once puts on the platform.
    const live = Array.from({ length: 16 }, () => randomUUID());
    const liveChat: number[] = [];
    const liveFirsts: number[] = [];
    const liveLlm: number[] = [];
    const liveBase: number[] = [];
    await Promise.all(
      live.map(async (sid, i) => {
        await new Promise((r) => setTimeout(r, i * 60)); // spread the sessions' first turns
        for (let t = 0; t < liveTurns; t++) {
          // Every third turn streams; each session also times the fake LLM alone now and then, under the same load.
          if (t % 3 === 2) liveFirsts.push(await streamFirstFragment(sid));
          else {
            const started = performance.now();
            await chatOnce(sid);
            liveChat.push(performance.now() - started);
          }
          let started = performance.now();
          await llmOnce();
          liveLlm.push(performance.now() - started);
          started = performance.now();
          await baselineOnce(sid);
          liveBase.push(performance.now() - started);
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }),
    );
    const liveRow = {
      load: 'live',
      sessions: 16,
      think_time_ms: 1000,
      chat_ms: summarize(liveChat),
      stream_first_fragment_ms: summarize(liveFirsts),
      fake_llm_ms: summarize(liveLlm),
      baseline_ms: summarize(liveBase),
      chat_overhead_p50_ms: 0,
      target: 'chat overhead p50 < 30 ms at 16 concurrent sessions',
      target_met: false,
    };
    liveRow.chat_overhead_p50_ms = Math.round((liveRow.chat_ms.p50 - liveRow.fake_llm_ms.p50) * 10) / 10;
    liveRow.target_met = liveRow.chat_overhead_p50_ms < 30;
    console.log(JSON.stringify(liveRow));
    // The answer cache: a first question in a new session, answered by a model that takes 100 ms, against the
    // same question already answered once (served from the cache, no model call). One turn at a time, in rounds.
    const cachedQuestion = '[[fake:slow-100]] What are your opening hours on Sundays?';
    await chatOnce(randomUUID(), cachedQuestion);
    const uncachedTimes: number[] = [];
    const cachedTimes: number[] = [];
    for (let i = 0; i < cacheTurns; i++) {
      let started = performance.now();
      await chatOnce(randomUUID(), `[[fake:slow-100]] What are your opening hours on day ${i} of the month?`);
      uncachedTimes.push(performance.now() - started);
      started = performance.now();
      await chatOnce(randomUUID(), cachedQuestion);
      cachedTimes.push(performance.now() - started);
    }
    const cacheRow = {
      load: 'answer cache',
      model_ms: 100,
      uncached_turn_ms: summarize(uncachedTimes),
      cached_turn_ms: summarize(cachedTimes),
    };
    console.log(JSON.stringify(cacheRow));
    const out = {
      benchmark: 'chat',
      at: new Date().toISOString(),
      turns,
      target: 'chat overhead p50 < 30 ms at 16 concurrent sessions',
      results,
      live: liveRow,
      answer_cache: cacheRow,
    };
    writeFileSync(path.join(__dirname, 'results', 'chat.json'), JSON.stringify(out, null, 2));
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
