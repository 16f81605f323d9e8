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

/** One of each call the chat benchmark times: a chat, a stream's first fragment, the model alone, the baseline. */
function chatCalls(api: string, secretKey: string, modelUrl: string, baselineUrl: string) {
  const headers = { 'X-Bot-Key': secretKey, 'Content-Type': 'application/json' };
  // Every question is new, so the answer cache never answers for the model in the overhead figures.
  let asked = 0;
  return {
    async chatOnce(session: string, message = `hello ${++asked}`) {
      const res = await fetch(`${api}/v1/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ session_id: session, message }),
      });
      if (res.status !== 200) throw new Error(`chat ${res.status}: ${await res.text()}`);
      await res.json();
    },
    async streamFirstFragment(session: string): Promise<number> {
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
    },
    async llmOnce() {
      const res = await fetch(`${modelUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: 'Bearer x', 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'hello' }] }),
      });
      await res.json();
    },
    async baselineOnce(session: string) {
      const res = await fetch(`${baselineUrl}/?session_id=${session}`);
      await res.json();
    },
  };
}
type ChatCalls = ReturnType<typeof chatCalls>;

/** `c` sessions each sending their next message the moment the answer arrives: latency, turns/s, CPU per turn. */
async function closedLoop(calls: ChatCalls, turns: number, c: number) {
  const sessions = Array.from({ length: c }, () => randomUUID());
  const llm = summarize(await runConcurrent(turns, c, () => calls.llmOnce()));
  const cpuBefore = cpuByRole();
  const started = performance.now();
  const chat = summarize(await runConcurrent(turns, c, (i) => calls.chatOnce(sessions[i % c])));
  const turnsPerSecond = Math.round((turns / ((performance.now() - started) / 1000)) * 10) / 10;
  const cpu = cpuPerOperation(cpuBefore, cpuByRole(), turns);
  const firsts: number[] = [];
  await runConcurrent(Math.min(turns, 100), c, async (i) => {
    firsts.push(await calls.streamFirstFragment(sessions[i % c]));
  });
  const base = summarize(await runConcurrent(turns, c, (i) => calls.baselineOnce(sessions[i % c])));
  return {
    load: 'closed loop',
    concurrency: c,
    chat_ms: chat,
    stream_first_fragment_ms: summarize(firsts),
    fake_llm_ms: llm,
    baseline_ms: base,
    chat_overhead_p50_ms: Math.round((chat.p50 - llm.p50) * 10) / 10,
    turns_per_s: turnsPerSecond,
    cpu_ms_per_turn: cpu,
  };
}

/**
 * Live: 16 sessions that each wait a visitor's second between turns (answer read, next message typed), rather than
 * firing the next turn at once: the load a site with 16 conversations going on at once puts on the platform.
 */
async function liveLoad(calls: ChatCalls, liveTurns: number) {
  const live = Array.from({ length: 16 }, () => randomUUID());
  const liveChat: number[] = [];
  const liveFirsts: number[] = [];
  const liveLlm: number[] = [];
  const liveBase: number[] = [];
  const timed = async (into: number[], call: () => Promise<unknown>) => {
    const started = performance.now();
    await call();
    into.push(performance.now() - started);
  };
  await Promise.all(
    live.map(async (sid, i) => {
      await new Promise((r) => setTimeout(r, i * 60)); // spread the sessions' first turns
      for (let t = 0; t < liveTurns; t++) {
        // Every third turn streams; each session also times the fake LLM alone now and then, under the same load.
        if (t % 3 === 2) liveFirsts.push(await calls.streamFirstFragment(sid));
        else await timed(liveChat, () => calls.chatOnce(sid));
        await timed(liveLlm, () => calls.llmOnce());
        await timed(liveBase, () => calls.baselineOnce(sid));
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }),
  );
  const chat = summarize(liveChat);
  const llm = summarize(liveLlm);
  const overhead = Math.round((chat.p50 - llm.p50) * 10) / 10;
  return {
    load: 'live',
    sessions: 16,
    think_time_ms: 1000,
    chat_ms: chat,
    stream_first_fragment_ms: summarize(liveFirsts),
    fake_llm_ms: llm,
    baseline_ms: summarize(liveBase),
    chat_overhead_p50_ms: overhead,
    target: 'chat overhead p50 < 30 ms at 16 concurrent sessions',
    target_met: overhead < 30,
  };
}

/**
 * The answer cache: a first question in a new session, answered by a model that takes 100 ms, against the same
 * question already answered once (served from the cache, no model call). One turn at a time, in rounds.
 */
async function answerCache(calls: ChatCalls, cacheTurns: number) {
  const cachedQuestion = '[[fake:slow-100]] What are your opening hours on Sundays?';
  await calls.chatOnce(randomUUID(), cachedQuestion);
  const uncachedTimes: number[] = [];
  const cachedTimes: number[] = [];
  for (let i = 0; i < cacheTurns; i++) {
    let started = performance.now();
    await calls.chatOnce(randomUUID(), `[[fake:slow-100]] What are your opening hours on day ${i} of the month?`);
    uncachedTimes.push(performance.now() - started);
    started = performance.now();
    await calls.chatOnce(randomUUID(), cachedQuestion);
    cachedTimes.push(performance.now() - started);
  }
  return {
    load: 'answer cache',
    model_ms: 100,
    uncached_turn_ms: summarize(uncachedTimes),
    cached_turn_ms: summarize(cachedTimes),
  };
}

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
    await stack.ready(db);
    const calls = chatCalls(stack.url, bot.keys.secret_key, stack.modelUrl, baseline.url);
    // Warm up: workflow caches, connection pools, JIT.
    await runConcurrent(40, 4, () => calls.chatOnce(randomUUID()));

    const results: Record<string, unknown>[] = [];
    for (const c of levels) {
      const row = await closedLoop(calls, turns, c);
      results.push(row);
      console.log(JSON.stringify(row));
    }
    const liveRow = await liveLoad(calls, liveTurns);
    console.log(JSON.stringify(liveRow));
    const cacheRow = await answerCache(calls, cacheTurns);
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
