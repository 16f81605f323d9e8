import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../stack/processes';
import { type OwnPlatform, http, newBot, startOwnPlatform, waitUntil } from '../support/helpers';

/**
 * A worker started with WORKER_METRICS_ADDRESS (its own, on a task queue of its own) serves the SDK's metrics for
 * Prometheus: what an operator reads to tell a worker short of CPU or of slots.
 */
describe('a worker with WORKER_METRICS_ADDRESS', () => {
  let own: OwnPlatform;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    own = await startOwnPlatform('worker-metrics', { WORKER_METRICS_ADDRESS: `127.0.0.1:${port}` });
  }, 120_000);

  afterAll(async () => own?.stop());

  it('serves its slots and its tasks’ waits and run times for Prometheus', async () => {
    const bot = await newBot();
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: 'Hello' },
      baseUrl: own.baseUrl,
    });
    expect(res.status).toBe(200);
    // Samples of this worker's task queue, by metric name (and the rest of their labels). The SDK records some after
    // the task is answered: read until the turn's are there.
    const queue = `task_queue="${own.env.TEMPORAL_TASK_QUEUE}"`;
    let text = '';
    const samples = (name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && l.includes(queue))
        .map((l) => ({ labels: l.slice(name.length + 1, l.lastIndexOf('}')), value: Number(l.split(' ').at(-1)) }));
    const total = (name: string) => samples(name).reduce((n, s) => n + s.value, 0);
    // How long the turn's workflow task waited for the worker, and how long its local activity (the model) ran.
    await waitUntil('the turn in the worker’s metrics', async () => {
      text = await (await fetch(metricsUrl)).text();
      return (
        total('temporal_workflow_task_schedule_to_start_latency_seconds_count') >= 1 &&
        total('temporal_local_activity_execution_latency_seconds_count') >= 1
      );
    });
    // Its slots: how many are free and used, per kind of task.
    const free = samples('temporal_worker_task_slots_available').find((s) => s.labels.includes('WorkflowWorker'));
    expect(free?.value).toBeGreaterThan(0);
    expect(free?.value).toBeLessThanOrEqual(1000);
    expect(samples('temporal_worker_task_slots_used').length).toBeGreaterThan(0);
  });
});
