import { Client, Connection, WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTemporalDev } from '../stack/temporal-dev';
import { freePort, startProcess } from '../stack/processes';
import { cpuByRole, cpuByThread, cpuPerOperation } from './cpu';
import { benchOptions, summarize, visitorsTakingTurns } from './measure';
import { endSignal, floorConversation, turnUpdate } from './floor/workflow';

const HELP = `Usage: npm run bench -- floor [--visitors 150] [--seconds 30] [--warmup 10] [--total-ms 2000] [--read-ms 1000]
                              [--chars 480] [--prestarted]

The least CPU a chat turn can cost through Temporal on this machine, the baseline of the load benchmark's CPU per
turn: the same pattern as the platform's turn (an update to a conversation workflow whose handler runs a local
activity for as long as the model answers) with nothing else — no database, no model, no HTTP. N visitors each send
an update that waits --total-ms and returns --chars characters, read for --read-ms, and send the next, as the load
benchmark's visitors do.

Starts its own Temporal dev server (as the platform's tests and benchmarks do) and a worker process with the
platform's slots, pollers and compression (WORKER_*, TEMPORAL_GRPC_COMPRESSION from the environment). This process
is the client (as the API is, through the same @temporalio/client). Reports updates/s against the ideal and the CPU
per update of the Temporal server, the worker and the client, how long an update took over the model's time and
how long it took to reach the local activity (the floor of the load benchmark's "update → turn start"); and the
same for the burst: every visitor's first update starts its workflow (Update-with-Start, as a new
conversation does), all in the same second. --prestarted starts every visitor's workflow before the burst, whose
first updates are then plain ones: what a new conversation would cost if its workflow were waiting for it.
Results: bench/results/floor.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const visitors = Number(arg('--visitors', '150'));
  const seconds = Number(arg('--seconds', '30'));
  const warmup = Number(arg('--warmup', '10'));
  const totalMs = Number(arg('--total-ms', '2000'));
  const readMs = Number(arg('--read-ms', '1000'));
  const chars = Number(arg('--chars', '480'));
  const jitter = Number(arg('--read-jitter', '0.5'));
  const prestarted = process.argv.includes('--prestarted');
  const taskQueue = 'floor';

  const temporal = await startTemporalDev({ port: await freePort(), headless: true, quiet: true });
  const worker = startProcess(
    'floor-worker',
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'floor', 'worker.ts'), temporal.address, taskQueue, String(chars)],
    { quiet: !process.env.BENCH_VERBOSE },
  );
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const handles: WorkflowHandle<typeof floorConversation>[] = [];
  // A new conversation's first message: the update starts its workflow.
  const updateWithStart = (workflowId: string, ms: number) =>
    client.workflow.executeUpdateWithStart(turnUpdate, {
      args: [ms],
      startWorkflowOperation: new WithStartWorkflowOperation(floorConversation, {
        taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  try {
    // Warm up as the load benchmark does (8 turns): the worker's bundle, JIT, the first workflows.
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const workflowId = `floor-warmup-${i}`;
        handles.push(client.workflow.getHandle<typeof floorConversation>(workflowId));
        await updateWithStart(workflowId, 0);
      }),
    );
    const turns: { endedAt: number; overMs: number; toActivityMs: number }[] = [];
    const burst: { overMs: number; toActivityMs: number }[] = [];
    const workflowIds = Array.from({ length: visitors }, (_, i) => `floor-${i}`);
    for (const id of workflowIds) handles.push(client.workflow.getHandle<typeof floorConversation>(id));
    if (prestarted) {
      // Every visitor's workflow started ahead of the burst (twenty at a time), and a few seconds for the worker to
      // run their first tasks: the burst's first updates are then plain ones.
      for (let i = 0; i < workflowIds.length; i += 20) {
        await Promise.all(
          workflowIds
            .slice(i, i + 20)
            .map((workflowId) => client.workflow.start(floorConversation, { taskQueue, workflowId })),
        );
      }
      await new Promise((r) => setTimeout(r, 5_000));
    }
    const t0 = performance.now();
    // Every visitor's first update starts its workflow (Update-with-Start, as a new conversation's first message
    // does; with --prestarted a plain update to the waiting one), all in the same second: the burst of new
    // conversations. Later ones are plain updates.
    const audience = visitorsTakingTurns(
      visitors,
      async (i, first) => {
        const sent = performance.now();
        const answer =
          first && !prestarted
            ? await updateWithStart(workflowIds[i], totalMs)
            : await client.workflow.getHandle(workflowIds[i]).executeUpdate(turnUpdate, { args: [totalMs] });
        const ended = performance.now();
        // The worker's answer starts with when its local activity began (bench/floor/worker.ts), on the same clock.
        const toActivityMs = Number(answer.slice(0, answer.indexOf(' '))) - (performance.timeOrigin + sent);
        const turn = { endedAt: ended, overMs: ended - sent - totalMs, toActivityMs };
        if (first && sent - t0 < 1000) burst.push(turn);
        turns.push(turn);
      },
      { readMs, jitter },
    );
    await new Promise((r) => setTimeout(r, warmup * 1000));
    const cpuBefore = cpuByRole();
    const threadsBefore = cpuByThread();
    const from = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const to = performance.now();
    const cpuAfter = cpuByRole();
    const threadsAfter = cpuByThread();
    await audience.stop();
    const { errors } = audience;

    const inWindow = turns.filter((t) => t.endedAt >= from && t.endedAt < to);
    const updates = inWindow.length;
    const rate = updates / ((to - from) / 1000);
    const ideal = visitors / ((totalMs + readMs) / 1000);
    const cpu = cpuPerOperation(cpuBefore, cpuAfter, Math.max(1, updates));
    const byRole = {
      temporal: cpu.temporal ?? 0,
      worker: cpu['floor worker'] ?? 0,
      client: cpu['load generator + fake LLM'] ?? 0,
    };
    const row = {
      visitors,
      updates_per_s: Math.round(rate * 10) / 10,
      ideal_updates_per_s: Math.round(ideal * 10) / 10,
      of_ideal: `${Math.round((rate / ideal) * 100)} %`,
      update_over_model_ms: summarize(inWindow.map((t) => t.overMs)),
      // The platform's "update → turn start" (bench load) in its least: the update's way to the local activity.
      update_to_activity_start_ms: summarize(inWindow.map((t) => t.toActivityMs)),
      burst_over_model_ms: summarize(burst.map((t) => t.overMs)),
      burst_update_to_activity_start_ms: summarize(burst.map((t) => t.toActivityMs)),
      cpu_ms_per_update: byRole,
      floor_cpu_ms_per_turn: Math.round((byRole.temporal + byRole.worker + byRole.client) * 10) / 10,
      cpu_ms_per_update_by_thread: cpuPerOperation(threadsBefore, threadsAfter, Math.max(1, updates)),
      errors: errors.length,
      ...(errors.length ? { first_error: errors[0] } : {}),
    };
    console.log(JSON.stringify(row));
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(
      path.join(__dirname, 'results', 'floor.json'),
      JSON.stringify(
        {
          benchmark: 'floor',
          at: new Date().toISOString(),
          machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
          model: { total_ms: totalMs, answer_chars: chars },
          read_ms: readMs,
          results: [row],
        },
        null,
        2,
      ),
    );
  } finally {
    await Promise.all(handles.map((h) => h.signal(endSignal).catch(() => undefined)));
    await connection.close();
    await worker.stop();
    await temporal.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
