import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  type OwnPlatform,
  fakeRequests,
  http,
  newBot,
  startOwnPlatform,
  testDb,
  useTemporalClient,
  waitUntil,
} from '../support/helpers';
import { readingDone, uploadFile } from '../support/documents';
import { knowledgeFileWorkflowId } from '../../workflows/contracts/knowledge-file';

/**
 * A worker killed in the middle of a file (docs/decisions/145-documents-in.md): the reading's index write is one
 * transaction, so the source keeps its previous version (never half of the new one) while no worker runs, and the
 * file is indexed once a worker is back. Its own API and worker (embeddings on, so a slow embedding model holds the
 * reading mid-file) on a task queue of their own, so killing the worker disturbs no other test.
 */
describe('a worker killed while it reads a file', () => {
  let own: OwnPlatform;
  const temporal = useTemporalClient();

  beforeAll(async () => {
    own = await startOwnPlatform('file-crash', { EMBEDDING_MODEL: 'fake-embed' });
  }, 120_000);

  afterAll(async () => own?.stop());

  it('leaves the previous version, then indexes the file when a worker is back; the reading is found by its bot in Temporal', async () => {
    const bot = await newBot();
    const key = bot.keys.secret_key;
    const first = await uploadFile(
      key,
      { name: 'lamp.md', bytes: '# Lamp\n\nThe lamp glows green.' },
      {},
      {},
      own.baseUrl,
    );
    expect(first.status).toBe(202);
    const sourceId = first.body.source_id;
    expect((await readingDone(key, sourceId, own.baseUrl)).status).toBe('indexed');

    // The second version's passages wait 6 s for their embeddings: the worker dies meanwhile.
    const tag = randomUUID();
    const second = await uploadFile(
      key,
      { name: 'lamp.md', bytes: `# Lamp\n\nThe lamp glows blue. [[fake:slow-6000]][[fake:tag:${tag}]]` },
      {},
      {},
      own.baseUrl,
    );
    expect(second.body).toMatchObject({ source_id: sourceId, replaced: true });
    await waitUntil('the embedding call of the second version', async () => (await fakeRequests(tag)).length > 0);
    await own.stopWorker('SIGKILL');

    const during = await http(`/v1/api/knowledge/${sourceId}?passages=true`, { key, baseUrl: own.baseUrl });
    expect(during.body).toMatchObject({ status: 'reading', fragments: 1 });
    expect(during.body.passages).toEqual([{ text: 'The lamp glows green.', heading_path: ['Lamp'], page: null }]);
    const { rows } = await testDb().query(
      `SELECT count(*)::int AS n FROM knowledge_fragments WHERE bot_id = $1 AND text LIKE '%blue%'`,
      [bot.bot_id],
    );
    expect(rows[0].n).toBe(0);

    await own.startWorker();
    const done = await readingDone(key, sourceId, own.baseUrl, 90_000);
    expect(done.status).toBe('indexed');
    expect(done.passages).toEqual([expect.objectContaining({ text: expect.stringContaining('The lamp glows blue.') })]);

    // Ops find the bot's readings in the Temporal UI by its BotId.
    const found: string[] = [];
    for await (const wf of temporal.workflow.list({
      query: `WorkflowType = 'knowledgeFileWorkflow' AND BotId = '${bot.bot_id}'`,
    })) {
      found.push(wf.workflowId);
    }
    expect(new Set(found)).toEqual(new Set([knowledgeFileWorkflowId(bot.bot_id, sourceId)]));
  }, 150_000);
});
