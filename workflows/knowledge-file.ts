import { proxyActivities } from '@temporalio/workflow';
import type { KnowledgeFileActivities } from '../activities/knowledge-file';
import { NON_RETRYABLE, failureInfo } from './failures';
import { FILE_HEARTBEAT_MS, type KnowledgeFileInput, type KnowledgeFileResult } from './contracts/knowledge-file';

const { readAndIndexFile } = proxyActivities<KnowledgeFileActivities>({
  // A file of 20 MiB and 500 pages is read in well under a minute; with embeddings on, up to 5 million characters are
  // embedded in calls of 128 passages (each given 30 s at most). Ten minutes bounds an attempt stuck some other way.
  startToCloseTimeout: '10 minutes',
  // The activity beats every 5 s from a timer while it works, whatever step it is in: silence this long means its
  // worker died, and the attempt is retried on another worker instead of after the ten minutes above.
  heartbeatTimeout: 4 * FILE_HEARTBEAT_MS,
  // A retry reads the file again from its kept original and writes its passages in one transaction: a killed
  // attempt left nothing half-written. A file that cannot be read is not an error (its reason is the result);
  // what is left to retry is storage or the embedding model failing.
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 3,
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

// One UPDATE; retried a few times so a database blip does not leave the source shown as reading.
const { markFileFailed } = proxyActivities<KnowledgeFileActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

/**
 * The reading of one uploaded file (docs/decisions/145-documents-in.md): read its kept original by its format, split it
 * into passages on its structure, embed them when embeddings are on, and index them with the source in one
 * transaction — one heartbeating activity, since passages of a 5 MiB text are too large to pass through the
 * workflow's history between steps. A file that cannot be read (encrypted, scanned, damaged, too many pages) ends
 * `failed` with its reason and writes no passage; so does a reading whose attempts all failed.
 */
export async function knowledgeFileWorkflow(input: KnowledgeFileInput): Promise<KnowledgeFileResult> {
  try {
    return await readAndIndexFile(input);
  } catch (err) {
    // The owner sees the reason: what kind of failure, not its internals (the history and the worker's log have them).
    const { type } = failureInfo(err);
    const reason =
      type === 'llm_unavailable' || type === 'llm_overloaded'
        ? 'The embedding model did not answer: upload the file again later'
        : 'The file could not be indexed after several tries: upload it again';
    await markFileFailed(input, reason);
    return { status: 'failed', reason };
  }
}
