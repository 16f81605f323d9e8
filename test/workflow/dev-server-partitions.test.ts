import { afterEach, describe, expect, it } from '@jest/globals';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { freePort } from '../../stack/processes';
import { type TemporalDevServer, startTemporalDev } from '../../stack/temporal-dev';

const NORMAL = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL;

/** The pollers the server saw on one partition of a task queue (`/_sys/<name>/<n>` names partition n > 0). */
async function pollersOn(connection: Connection, name: string, partition: number): Promise<string[]> {
  const res = await connection.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: partition === 0 ? name : `/_sys/${name}/${partition}`, kind: NORMAL },
  });
  return (res.pollers ?? []).map((p) => p.identity ?? '');
}

describe("the dev server's task queues (npm start and the tests: stack/temporal-dev.ts)", () => {
  let server: TemporalDevServer | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('have one partition: every poller waits on the queue itself, so a burst of new workflows meets every poller', async () => {
    server = await startTemporalDev({ port: await freePort(), headless: true, quiet: true });
    const connection = await Connection.connect({ address: server.address });
    const taskQueue = `partitions-${process.pid}`;
    try {
      // Sixteen pollers, as a worker's are: with four partitions the server spreads them over all four.
      await Promise.all(
        Array.from(
          { length: 16 },
          (_, i) =>
            connection
              .withDeadline(Date.now() + 3_000, () =>
                connection.workflowService.pollWorkflowTaskQueue({
                  namespace: 'default',
                  taskQueue: { name: taskQueue, kind: NORMAL },
                  identity: `probe-${i}`,
                }),
              )
              .catch(() => undefined), // no task comes: the poll ends at its deadline (the server asks for at least 2 s)
        ),
      );
      expect((await pollersOn(connection, taskQueue, 0)).length).toBeGreaterThan(0);
      const elsewhere = await Promise.all([1, 2, 3].map((n) => pollersOn(connection, taskQueue, n)));
      expect(elsewhere.flat()).toEqual([]);
    } finally {
      await connection.close();
    }
  }, 120_000);
});
