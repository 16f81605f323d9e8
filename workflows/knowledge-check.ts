import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { KnowledgeCheckActivities } from '../activities/knowledge-check';
import { NON_RETRYABLE, failure, failureInfo } from './failures';
import type { KnowledgeCheckInput, KnowledgeCheckSummary } from './contracts/knowledge-check';

const { checkQuestions, finishCheck } = proxyActivities<KnowledgeCheckActivities>({
  // A batch is ten retrievals: milliseconds each, or up to 5 s when the question's embedding is slow (the turn's own
  // budget, worker/deps.ts). Two minutes bounds an attempt stuck some other way.
  startToCloseTimeout: '2 minutes',
  // The activity beats after every question: silence this long means its worker died, and the batch is retried on
  // another worker at once instead of after the two minutes.
  heartbeatTimeout: '30 seconds',
  // A retry checks only the questions still unchecked (their results are written once). Storage or the embedding
  // model failing is what is left to retry; five attempts ride out a restart of either.
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

// One UPDATE; retried a few times so a database blip does not leave the check shown as running.
const { markCheckFailed } = proxyActivities<KnowledgeCheckActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

/**
 * The owner's check of an agent (docs/decisions/155-owner-check.md): every test question of the run, in batches, through
 * the chat turn's retrieval, each result and the run's counters written as it goes (the dashboard's progress), then the
 * run marked done. The questions were copied into the run when it started, so history stays small whatever they say.
 */
export async function knowledgeCheckWorkflow(input: KnowledgeCheckInput): Promise<KnowledgeCheckSummary> {
  try {
    // Each batch checks at least one question or reports none left: the loop ends within questions / batch turns.
    while ((await checkQuestions(input)).remaining > 0);
    return await finishCheck(input);
  } catch (err) {
    const { message } = failureInfo(err);
    await CancellationScope.nonCancellable(() => markCheckFailed(input, 'The check stopped before it finished'));
    throw failure('check_failed', `The owner's check failed: ${message}`);
  }
}
