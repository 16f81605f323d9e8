import { Client, Connection } from '@temporalio/client';
import { createHmac, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDb } from '../lib/db';
import { benchOptions, runConcurrent, summarize } from './measure';
import { benchBot, startBenchStack } from './stack';

const HELP = `Usage: npm run bench -- hooks [--requests N] [--concurrency 1,8,32]

Acknowledged trigger hooks per second (POST /v1/hooks/{tid} → 202 with the run's workflow started), beside the
Temporal dev server's own bare workflow-start rate (client.workflow.start of an empty workflow), in the same run.
Results: bench/results/hooks.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const total = Number(arg('--requests', '500'));
  const levels = arg('--concurrency', '1,8,32').split(',').map(Number);

  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 4 });
  const connection = await Connection.connect({ address: stack.platform.env.TEMPORAL_ADDRESS });
  const client = new Client({ connection });
  try {
    const bot = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
    const api = stack.platform.apiUrl;
    const login = await fetch(`${api}/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: bot.email, password: bot.password }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const created = (await (
      await fetch(`${api}/v1/dashboard/bots/${bot.bot_id}/triggers`, {
        method: 'POST',
        headers: { Cookie: cookie, 'Content-Type': 'application/json' },
        body: JSON.stringify({ kind: 'webhook', task: 'Record the event', mode: 'ack' }),
      })
    ).json()) as { id: string; secret: string };
    const body = JSON.stringify({ event: 'order.created', id: 1 });
    const signature = `sha256=${createHmac('sha256', created.secret).update(body).digest('hex')}`;
    const hook = async () => {
      const res = await fetch(`${api}/v1/hooks/${created.id}`, {
        method: 'POST',
        headers: { 'X-Hook-Signature': signature },
        body,
      });
      if (res.status !== 202) throw new Error(`hook ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    const bareStart = async () => {
      await client.workflow.start('benchBareWorkflow', {
        taskQueue: 'bench-no-worker',
        workflowId: `bench/${randomUUID()}`,
        args: [],
      });
    };
    await runConcurrent(50, 4, hook);
    await runConcurrent(50, 4, bareStart);

    const results = [];
    for (const c of levels) {
      let t = performance.now();
      const hookLat = await runConcurrent(total, c, hook);
      const hookRps = total / ((performance.now() - t) / 1000);
      t = performance.now();
      const bareLat = await runConcurrent(total, c, bareStart);
      const bareRps = total / ((performance.now() - t) / 1000);
      const row = {
        concurrency: c,
        hooks: { rps: Math.round(hookRps), latency_ms: summarize(hookLat) },
        bare_workflow_start: { rps: Math.round(bareRps), latency_ms: summarize(bareLat) },
        ratio: Math.round((hookRps / bareRps) * 100) / 100,
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
    writeFileSync(
      path.join(__dirname, 'results', 'hooks.json'),
      JSON.stringify({ benchmark: 'hooks', at: new Date().toISOString(), requests: total, results }, null, 2),
    );
  } finally {
    await connection.close();
    await db.end();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
