import { ApplicationFailure, TemporalFailure, TimeoutFailure } from '@temporalio/workflow';

/**
 * The first ApplicationFailure in a failure's cause chain. Activity, local-activity and child-workflow failures
 * wrap the original differently; walking the chain reads them all the same way (STYLE.md: match by `type`).
 */
export function applicationFailureIn(err: unknown): ApplicationFailure | undefined {
  for (let e: unknown = err; e; e = (e as TemporalFailure).cause) {
    if (e instanceof ApplicationFailure) return e;
  }
  return undefined;
}

export function isTimeout(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as TemporalFailure).cause) {
    if (e instanceof TimeoutFailure) return true;
  }
  return false;
}
