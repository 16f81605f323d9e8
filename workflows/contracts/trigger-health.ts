import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * Trigger runs from Schedules, and the per-trigger failure counter that pauses a failing trigger.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

/** What a Temporal Schedule starts for a schedule or poll trigger. */
export interface ScheduledRunInput {
  triggerId: string;
  triggerKind: 'schedule' | 'poll';
  botId: string;
  workspaceId: string;
  turnTimeoutMs: number;
}

export interface RunFinished {
  runId: string;
  ok: boolean;
  /** The pause threshold (contract, Limits: 5), sent with every report so the limit lives in one place (lib/limits). */
  pauseAfter: number;
}

/** The health workflow's answer to a report: the count after it, and whether this report paused the trigger. */
export interface RunReported {
  failures: number;
  paused: boolean;
}

/** How runs report (and wait until the report is counted, and a pause recorded). */
export const runFinishedUpdate = defineUpdate<RunReported, [RunFinished]>('runFinished');

/** Reports of runs started before the update existed; handled the same way, unanswered. */
export const runFinishedSignal = defineSignal<[RunFinished]>('runFinished');

export function triggerHealthWorkflowId(triggerId: string): string {
  return `trigger/${triggerId}`;
}

export function triggerScheduleId(triggerId: string): string {
  return `trigger-schedule/${triggerId}`;
}
