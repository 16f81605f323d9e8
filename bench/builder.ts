import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createDb } from '../lib/db';
import { benchOptions, summarize } from './measure';
import { benchBot, liftRateLimits, startBenchStack } from './stack';

const HELP = `Usage: npm run bench -- builder [--calls N]

The builder over MCP (POST /v1/api/mcp), one client in the current protocol era, calls in sequence, over a
zero-latency fake LLM. Starts its own platform (as the tests do). Three operations, interleaved round by round so
they share the same conditions:

  tools/list    the SDK handler and the key check alone: the baseline of this run
  agents        the read tool: a key check, the reads budget and one SQL statement
  constructor   a builder turn: the budget, an Update-with-Start of the thread's workflow, one model step (an
                activity), the answer, and the receipt signal after the response

Each --calls times (default 100). Results: bench/results/builder.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const calls = Number(arg('--calls', '100'));
  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 2 });
  try {
    const bot = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
    await liftRateLimits(db);
    const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.platform.apiUrl}/v1/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${bot.keys.builder_key}` } },
      }),
    );
    const timed = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const ops = {
      'tools/list': () => client.listTools(),
      agents: () => client.callTool({ name: 'agents', arguments: {} }),
      // Ten threads in turn, so a thread's previous result has long been received when its next message comes.
      constructor: (i: number) =>
        client.callTool({ name: 'constructor', arguments: { message: `hello ${i}`, thread: `bench-${i % 10}` } }),
    };
    // Warm-up: connections, prepared statements, the workflow bundle's first activations.
    for (let i = 0; i < 10; i++) for (const op of Object.values(ops)) await op(i);
    const samples: Record<string, number[]> = { 'tools/list': [], agents: [], constructor: [] };
    for (let i = 0; i < calls; i++) {
      for (const [name, op] of Object.entries(ops)) samples[name].push(await timed(() => op(i)));
    }
    await client.close();
    const results = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize(v)]));
    console.table(results);
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(
      path.join(__dirname, 'results', 'builder.json'),
      JSON.stringify({ at: new Date().toISOString(), calls, results }, null, 2),
    );
  } finally {
    await db.end();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
