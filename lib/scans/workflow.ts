import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { type SiteScanInput, siteScanSearchAttributes, siteScanWorkflowId } from '../../workflows/contracts/site-scan';
import { siteScanWorkflow } from '../../workflows/site-scan';
import { ApiError } from '../errors';
import type { Temporal } from '../temporal';

/** A bot's scan workflow, `scan/{botId}`: starting it, and whether one runs now. */

/**
 * Starts the bot's scan as `scan/{botId}`. The workflow id is the lock: while a scan runs, the start fails and the
 * request gets 409 `conflict`; once it has closed (whatever its outcome) a new one may start.
 */
export async function startSiteScan(t: Temporal, input: SiteScanInput): Promise<{ runId: string }> {
  try {
    const handle = await t.client.workflow.start(siteScanWorkflow, {
      workflowId: siteScanWorkflowId(input.botId),
      taskQueue: t.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      searchAttributes: siteScanSearchAttributes(input),
    });
    return { runId: handle.firstExecutionRunId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ApiError('conflict', 'A site scan of this bot is already running; try again when it has finished');
    }
    throw err;
  }
}

/** The run id of the bot's scan if one is running now, else null. */
export async function runningScan(t: Temporal, botId: string): Promise<string | null> {
  try {
    const description = await t.client.workflow.getHandle(siteScanWorkflowId(botId)).describe();
    return description.status.name === 'RUNNING' ? description.runId : null;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
