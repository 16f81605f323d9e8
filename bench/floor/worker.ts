import { NativeConnection, Worker } from '@temporalio/worker';
import { workerCapacity } from '../../worker/deps';
import { type Config, configSchema } from '../../lib/config';

/**
 * The floor benchmark's worker (bench/floor.ts), a process of its own as the platform's worker is: the same slots,
 * pollers and gRPC compression as the platform's (WORKER_*, TEMPORAL_GRPC_COMPRESSION from the environment, else
 * their defaults), the bare workflow of ./workflow.ts, and a local activity that waits and answers.
 * Usage: node --import tsx bench/floor/worker.ts <temporal address> <task queue> <answer characters>
 */
async function main() {
  const [address, taskQueue, chars] = process.argv.slice(2);
  const setting = <K extends keyof Config>(key: K) => configSchema.shape[key].parse(process.env[key]) as Config[K];
  const capacity = workerCapacity({
    WORKER_WORKFLOW_TASK_SLOTS: setting('WORKER_WORKFLOW_TASK_SLOTS'),
    WORKER_LOCAL_ACTIVITY_SLOTS: setting('WORKER_LOCAL_ACTIVITY_SLOTS'),
    WORKER_ACTIVITY_SLOTS: setting('WORKER_ACTIVITY_SLOTS'),
    WORKER_WORKFLOW_TASK_POLLS: setting('WORKER_WORKFLOW_TASK_POLLS'),
    WORKER_MAX_CACHED_WORKFLOWS: setting('WORKER_MAX_CACHED_WORKFLOWS'),
  } as Config);
  const answer = 'x'.repeat(Number(chars));
  // The answer begins with when the activity started (ms since the epoch, to the microsecond: both processes read
  // the same clock), so the client can tell the update's way to the activity from the activity's own time.
  const startedAt = () => (performance.timeOrigin + performance.now()).toFixed(3);
  const connection = await NativeConnection.connect({
    address,
    grpcCompression: { codec: setting('TEMPORAL_GRPC_COMPRESSION') },
  });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: {
      model: (ms: number) => {
        const started = startedAt();
        return new Promise<string>((resolve) => setTimeout(() => resolve(`${started} ${answer}`), ms));
      },
    },
    ...capacity,
  });
  process.once('SIGTERM', () => worker.shutdown());
  console.log('floor worker started');
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
