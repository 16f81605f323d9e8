import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../lib/config';
import { workerCapacity, workerConnectionOptions, workerMetrics } from '../../worker/deps';

const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', SECRET_ENCRYPTION_KEY: 'ab'.repeat(32) };

/**
 * A chat turn holds a workflow-task slot and a local-activity slot while the model answers, so the SDK's default of
 * 40 workflow tasks capped a worker at ~40 turns in flight on an idle machine (bench load: 38 % of the ideal rate at
 * 150 visitors). The worker's capacity comes from configuration, sized for waiting turns.
 */
describe('worker capacity', () => {
  it('by default, far more slots than the SDK gives (a thousand turns in flight), 20 pollers, the SDK’s cache', () => {
    expect(workerCapacity(parseConfig(base))).toEqual({
      maxConcurrentWorkflowTaskExecutions: 1000,
      maxConcurrentLocalActivityExecutions: 1000,
      maxConcurrentActivityTaskExecutions: 200,
      maxConcurrentWorkflowTaskPolls: 20,
    });
  });

  it('is configured by WORKER_*; pollers never exceed the workflow-task slots', () => {
    const config = parseConfig({
      ...base,
      WORKER_WORKFLOW_TASK_SLOTS: '8',
      WORKER_LOCAL_ACTIVITY_SLOTS: '16',
      WORKER_ACTIVITY_SLOTS: '4',
      WORKER_WORKFLOW_TASK_POLLS: '20',
      WORKER_MAX_CACHED_WORKFLOWS: '50',
    });
    expect(workerCapacity(config)).toEqual({
      maxConcurrentWorkflowTaskExecutions: 8,
      maxConcurrentLocalActivityExecutions: 16,
      maxConcurrentActivityTaskExecutions: 4,
      maxConcurrentWorkflowTaskPolls: 8,
      maxCachedWorkflows: 50,
    });
    expect(() => parseConfig({ ...base, WORKER_WORKFLOW_TASK_SLOTS: '1' })).toThrow(/WORKER_WORKFLOW_TASK_SLOTS/);
  });

  it('talks to Temporal uncompressed unless TEMPORAL_GRPC_COMPRESSION=gzip, with the shared address and TLS', () => {
    const plain = workerConnectionOptions(parseConfig({ ...base, TEMPORAL_ADDRESS: 'temporal.internal:7233' }));
    expect(plain).toMatchObject({ address: 'temporal.internal:7233', grpcCompression: { codec: 'none' } });
    expect(
      workerConnectionOptions(parseConfig({ ...base, TEMPORAL_GRPC_COMPRESSION: 'gzip' })).grpcCompression,
    ).toEqual({ codec: 'gzip' });
    expect(() => parseConfig({ ...base, TEMPORAL_GRPC_COMPRESSION: 'brotli' })).toThrow(/TEMPORAL_GRPC_COMPRESSION/);
  });
});

describe('worker metrics', () => {
  it('are off unless WORKER_METRICS_ADDRESS names where to serve them; a bad address is refused', () => {
    expect(workerMetrics(parseConfig(base))).toEqual({});
    expect(workerMetrics(parseConfig({ ...base, WORKER_METRICS_ADDRESS: '0.0.0.0:9464' }))).toEqual({
      metrics: {
        prometheus: {
          bindAddress: '0.0.0.0:9464',
          countersTotalSuffix: true,
          unitSuffix: true,
          useSecondsForDurations: true,
        },
      },
    });
    expect(workerMetrics(parseConfig({ ...base, WORKER_METRICS_ADDRESS: '[::1]:9464' }))).toMatchObject({
      metrics: { prometheus: { bindAddress: '[::1]:9464' } },
    });
    for (const bad of ['9464', 'http://0.0.0.0:9464', 'localhost:', 'a b:1']) {
      expect(() => parseConfig({ ...base, WORKER_METRICS_ADDRESS: bad })).toThrow(/WORKER_METRICS_ADDRESS/);
    }
  });
});
