import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';

/**
 * A worker process for test/workflow/workflow-thread-guard.test.ts: the workflows of ./workflows/spinning.ts on a
 * task queue of the test's, with a 2 s limit on a workflow's call (the SDK's `isolateExecutionTimeout`, 5 s by
 * default) so the guard acts within the test's time. WORKER_WORKFLOW_TIMEOUT_PER_CALL comes from the environment.
 * Usage: node --import tsx test/support/spinning-worker.ts <temporal address> <namespace> <task queue>
 */
async function main() {
  const [address, namespace, taskQueue] = process.argv.slice(2);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('./workflows/spinning'),
    // Not in WorkerOptions' type (the SDK hid it, sdk-typescript#249), still read by it: the default is 5 s.
    ...({ isolateExecutionTimeout: '2s' } as object),
  });
  process.once('SIGTERM', () => worker.shutdown());
  console.log('spinning worker started');
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
