/**
 * A workflow that, when asked to, never yields: the bug the workflow thread's deadlock guard is for (patches/,
 * docs/decisions/125-workflow-thread-deadlock-guard.md). Test only; run by test/support/spinning-worker.ts.
 */
export async function spinningWorkflow(spin: boolean): Promise<string> {
  if (spin) {
    for (;;) {
      // A loop that never awaits: the thread running it answers nothing else.
    }
  }
  return 'answered';
}
